package chatgrpc_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"partnerapi/internal/assistant"
	"partnerapi/internal/assistant/chatgrpc"
	"partnerapi/internal/inference/local"
	"partnerapi/internal/testenv"
)

// stallEngine is the local engine whose deltas stop reaching the transport
// after the first `after`, as with a client that stops reading: the next
// emit waits for the call's cancellation, so the cut comes before the end
// of generation however fast the machine is.
type stallEngine struct {
	*local.Engine
	after   int
	stalled chan struct{}
}

func (e *stallEngine) Generate(ctx context.Context, req assistant.GenerateRequest, emit func(assistant.Delta) error) (assistant.Result, error) {
	n := 0
	return e.Engine.Generate(ctx, req, func(d assistant.Delta) error {
		if n == e.after {
			e.stalled <- struct{}{}
			<-ctx.Done()
			return ctx.Err()
		}
		n++
		if emit == nil {
			return nil
		}
		return emit(d)
	})
}

// TestCutGRPCStreamIsBilled cancels a ChatStream after a few messages and
// lets another run out its deadline: each is billed its prompt and at least
// the tokens that arrived, never more than the prompt and max_tokens.
func TestCutGRPCStreamIsBilled(t *testing.T) {
	const balance, maxTokens, messages = 1_000_000, 100, 3
	dir := t.TempDir()
	if err := os.Symlink(testenv.Model(t, "stories260K.gguf"), filepath.Join(dir, "stories260K.gguf")); err != nil {
		t.Fatal(err)
	}
	eng, err := local.Open(dir, local.Options{PrefixCache: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	probe, err := eng.Generate(context.Background(), assistant.GenerateRequest{Model: "stories260K",
		Messages: []assistant.Message{{Role: "user", Content: "Once upon a time"}}, MaxTokens: 1, N: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	prompt := probe.Usage.PromptTokens
	stall := &stallEngine{Engine: eng, after: messages, stalled: make(chan struct{}, 1)}
	e := start(t, stall, chatgrpc.Config{})
	for _, how := range []string{"cancel", "deadline"} {
		t.Run(how, func(t *testing.T) {
			tok := e.token(t, assistant.ScopePers, assistant.Balance{Model: "stories260K", Tokens: balance})
			p, err := e.svc.Authenticate(context.Background(), tok)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(authed(tok))
			defer cancel()
			if how == "deadline" {
				ctx, cancel = context.WithTimeout(ctx, 500*time.Millisecond)
				defer cancel()
			}
			st, err := e.chat.ChatStream(ctx, greedy("stories260K", maxTokens))
			if err != nil {
				t.Fatal(err)
			}
			got := 0
			for ; got < messages; got++ {
				if _, err := st.Recv(); err != nil {
					t.Fatalf("stream ended after %d messages: %v", got, err)
				}
			}
			<-stall.stalled
			if how == "cancel" {
				cancel()
			}
			_, err = st.Recv()
			want := map[string]codes.Code{"cancel": codes.Canceled, "deadline": codes.DeadlineExceeded}[how]
			if status.Code(err) != want {
				t.Fatalf("after the cut: %v, want %v", err, want)
			}
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(2 * time.Millisecond) {
				// A PERS client's one slot comes back after Run has billed.
				if release, err := e.svc.Acquire(context.Background(), p); err == nil {
					release()
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the call never let go of its slot")
				}
			}
			bs, err := e.svc.Balance(context.Background(), p)
			if err != nil || len(bs) != 1 {
				t.Fatalf("balance %+v: %v", bs, err)
			}
			spent := balance - bs[0].Tokens
			t.Logf("prompt %d tokens, %d messages received, %d tokens billed", prompt, got, spent)
			if spent < int64(prompt+got) || spent > int64(prompt+maxTokens) {
				t.Errorf("billed %d tokens for a call cut after %d messages, want %d..%d", spent, got, prompt+got, prompt+maxTokens)
			}
		})
	}
}
