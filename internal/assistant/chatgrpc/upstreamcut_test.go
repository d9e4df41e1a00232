package chatgrpc_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"partnerapi/internal/assistant"
	"partnerapi/internal/assistant/chatgrpc"
	"partnerapi/internal/assistant/upstream"
	"partnerapi/internal/assistant/upstream/upstreamtest"
)

// TestUpstreamCutGRPCChatIsBilled cancels a unary Chat, and lets another
// run out its deadline, while an upstream (a pool of one fake
// llama-server, counting a token a word) generates it. Nothing is relayed
// on a unary call, so the bill is the engine's count of what it read of
// the upstream's stream: the prompt "x" (1) and "Once upon a time" (4).
// A call cut before the upstream streamed any of the answer bills nothing.
func TestUpstreamCutGRPCChatIsBilled(t *testing.T) {
	const balance = 1_000_000
	for _, tc := range []struct {
		name   string
		how    string // "cancel" or "deadline"
		events []string
		want   int64
	}{
		{"cancelled after two deltas", "cancel", []string{
			`{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`,
			`{"choices":[{"index":0,"delta":{"content":"Once upon"}}]}`,
			`{"choices":[{"index":0,"delta":{"content":" a time"}}]}`,
		}, 1 + 4},
		{"past its deadline after a delta", "deadline", []string{
			`{"choices":[{"index":0,"delta":{"content":"Once upon a time"}}]}`,
		}, 1 + 4},
		{"cancelled before any delta", "cancel", []string{`{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := upstreamtest.New(t, func(int) upstreamtest.Chat {
				return upstreamtest.Chat{Events: tc.events, Pause: -1}
			})
			pool := upstream.NewPool("m", upstream.Served{}, []string{srv.URL}, upstream.PoolOptions{Client: srv.Client, ProbeInterval: time.Hour})
			t.Cleanup(pool.Close)
			e := start(t, pool, chatgrpc.Config{})
			tok := e.token(t, assistant.ScopePers, assistant.Balance{Model: "m", Tokens: balance})
			p, err := e.svc.Authenticate(context.Background(), tok)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(authed(tok))
			defer cancel()
			if tc.how == "deadline" {
				// Long enough for the engine to read the stream on a
				// loaded machine, which the test waits for in full.
				ctx, cancel = context.WithTimeout(ctx, time.Second)
				defer cancel()
			}
			go func() {
				<-srv.Read
				if tc.how == "cancel" {
					cancel()
				}
			}()
			_, err = e.chat.Chat(ctx, chatReq("m"))
			want := map[string]codes.Code{"cancel": codes.Canceled, "deadline": codes.DeadlineExceeded}[tc.how]
			if status.Code(err) != want {
				t.Fatalf("the cut call: %v, want %v", err, want)
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
			if spent := balance - bs[0].Tokens; spent != tc.want {
				t.Fatalf("billed %d tokens, want %d", spent, tc.want)
			}
		})
	}
}
