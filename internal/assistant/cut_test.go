package assistant_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"partnerapi/internal/assistant"
	"partnerapi/internal/assistant/assistantsql"
	"partnerapi/internal/inference/local"
	"partnerapi/internal/storetest"
	"partnerapi/internal/testenv"
)

// These tests run the chat service directly: a generation the client cuts
// short while it finishes is billed once, and an engine that reports no
// usage on a cut is billed for the deltas it streamed.

const cutBalance = 1_000_000

// prepaid returns a service over eng and a PERS client with a balance for
// model.
func prepaid(t *testing.T, eng assistant.Engine, model string) (*assistant.Service, assistant.Principal) {
	t.Helper()
	db := storetest.SQLite(t)
	if err := assistantsql.Migrate(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	svc := assistant.NewService(assistantsql.New(db), eng, assistant.Config{})
	c, err := svc.CreateClient(context.Background(), assistant.ScopePers, []assistant.Balance{{Model: model, Tokens: cutBalance}})
	if err != nil {
		t.Fatal(err)
	}
	return svc, assistant.Principal{ClientID: c.ClientID, Scope: assistant.ScopePers}
}

func spent(t *testing.T, svc *assistant.Service, p assistant.Principal) int64 {
	t.Helper()
	bs, err := svc.Balance(context.Background(), p)
	if err != nil || len(bs) != 1 {
		t.Fatalf("balance %+v: %v", bs, err)
	}
	return cutBalance - bs[0].Tokens
}

func billable(u assistant.Usage) int64 {
	return int64(u.PromptTokens + u.CompletionTokens - u.PrecachedPromptTokens)
}

// TestCutRacingTheEndIsBilledOnce cancels generations of the local engine
// on a random one of their deltas, the last included, so that the
// cancellation and the end of generation race in the engine. Every run is
// billed once: its prompt and its generated tokens, what Run reports.
func TestCutRacingTheEndIsBilledOnce(t *testing.T) {
	const maxTokens = 8
	dir := t.TempDir()
	if err := os.Symlink(testenv.Model(t, "stories260K.gguf"), filepath.Join(dir, "stories260K.gguf")); err != nil {
		t.Fatal(err)
	}
	eng, err := local.Open(dir, local.Options{PrefixCache: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	svc, p := prepaid(t, eng, "stories260K")
	zero, max := 0.0, maxTokens
	// The prompt is longer than max_tokens, so a second bill of any run
	// would take more than the prompt and max_tokens together.
	prompt := "Once upon a time there was a little girl named Lily. She liked to play in the park with her dog."
	c, err := svc.PrepareChat(context.Background(), p, assistant.ChatRequest{Model: "stories260K", Temperature: &zero, MaxTokens: &max,
		Messages: []assistant.Message{{Role: "user", Content: prompt}}})
	if err != nil {
		t.Fatal(err)
	}
	var cut, finished int
	for range 40 {
		before := spent(t, svc, p)
		ctx, cancel := context.WithCancel(context.Background())
		at, n := 1+rand.IntN(maxTokens), 0
		res, err := svc.Run(ctx, c, func(assistant.Delta) error {
			if n++; n == at {
				cancel()
			}
			return nil
		})
		cancel()
		if err != nil {
			cut++
		} else {
			finished++
		}
		got := spent(t, svc, p) - before
		u := res.Usage
		if got != billable(u) || u.PromptTokens < maxTokens || u.CompletionTokens < 1 || u.CompletionTokens > maxTokens {
			t.Fatalf("cancelled at delta %d (err %v): billed %d tokens, usage %+v", at, err, got, u)
		}
	}
	t.Logf("%d runs cut, %d finished before the cut", cut, finished)
}

// scriptEngine streams its words as deltas. With hang it then waits for
// the cancellation and reports no usage, as an upstream does; else it
// finishes, and with cancel cancels the call as it does (the client
// hanging up on the last token), reporting both the full usage and the
// cancellation.
type scriptEngine struct {
	fakeEngine
	words  []string
	hang   bool
	cancel context.CancelFunc
}

func (e *scriptEngine) Generate(ctx context.Context, req assistant.GenerateRequest, emit func(assistant.Delta) error) (assistant.Result, error) {
	for _, w := range e.words {
		if err := emit(assistant.Delta{Text: w + " "}); err != nil {
			return assistant.Result{}, err
		}
	}
	if e.hang {
		<-ctx.Done()
		return assistant.Result{}, ctx.Err()
	}
	res := assistant.Result{Choices: []assistant.Choice{{Text: strings.Join(e.words, " "), FinishReason: "stop"}},
		Usage: assistant.Usage{PromptTokens: 7, CompletionTokens: len(e.words)}}
	if e.cancel != nil {
		e.cancel()
	}
	return res, ctx.Err()
}

func scriptedChat(t *testing.T, svc *assistant.Service, p assistant.Principal, content string) assistant.Chat {
	t.Helper()
	c, err := svc.PrepareChat(context.Background(), p, assistant.ChatRequest{Model: "m", Messages: []assistant.Message{{Role: "user", Content: content}}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCutEngineReportingNoUsage: an engine that reports nothing on a cut
// is billed the deltas relayed and the prompt's text, counted with the
// model's tokenizer (here a word count); a cut before any delta bills
// nothing, since nothing shows the prompt was processed.
func TestCutEngineReportingNoUsage(t *testing.T) {
	eng := &scriptEngine{fakeEngine: fakeEngine{[]assistant.ModelInfo{{Name: "m", Version: "1", Type: "chat", ContextWindow: 100}}}, hang: true}
	svc, p := prepaid(t, eng, "m")
	for _, words := range [][]string{nil, {"one", "two", "three"}} {
		eng.words = words
		before := spent(t, svc, p)
		ctx, cancel := context.WithCancel(context.Background())
		if len(words) == 0 {
			cancel()
		}
		relayed := 0
		_, err := svc.Run(ctx, scriptedChat(t, svc, p, "four words of prompt"), func(assistant.Delta) error {
			if relayed++; relayed == len(words) {
				cancel()
			}
			return nil
		})
		cancel()
		if err == nil {
			t.Fatal("the cut generation succeeded")
		}
		want := int64(0)
		if len(words) > 0 {
			want = 4 + int64(len(words))
		}
		if got := spent(t, svc, p) - before; got != want {
			t.Errorf("%d deltas relayed: billed %d tokens, want %d", len(words), got, want)
		}
	}
}

// TestCutOnTheLastTokenIsBilledOnce: the engine finished and the client
// cancelled at once; the usage is billed exactly once, whether the run is
// reported as cut (with the streaming transport's emit) or not (without
// one).
func TestCutOnTheLastTokenIsBilledOnce(t *testing.T) {
	eng := &scriptEngine{fakeEngine: fakeEngine{[]assistant.ModelInfo{{Name: "m", Version: "1", Type: "chat", ContextWindow: 100}}}, words: []string{"a", "b"}}
	svc, p := prepaid(t, eng, "m")
	for i := range 20 {
		before := spent(t, svc, p)
		ctx, cancel := context.WithCancel(context.Background())
		eng.cancel = cancel
		_, err := svc.Run(ctx, scriptedChat(t, svc, p, "hi"), func(assistant.Delta) error { return nil })
		cancel()
		if got := spent(t, svc, p) - before; got != 9 {
			t.Fatalf("run %d (err %v): billed %d tokens, want 9", i, err, got)
		}
	}
}

// failingCharges is a store whose prepaid charges fail.
type failingCharges struct{ assistant.Store }

func (failingCharges) Charge(context.Context, assistant.Bill) error {
	return errors.New("the database is gone")
}

// TestCutBillFailureIsLogged: a chat cut short whose bill fails returns
// the cancellation (the transports answer 499 or CANCELLED, to no one, and
// log nothing), so the service logs the lost bill itself.
func TestCutBillFailureIsLogged(t *testing.T) {
	db := storetest.SQLite(t)
	if err := assistantsql.Migrate(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	eng := &scriptEngine{fakeEngine: fakeEngine{[]assistant.ModelInfo{{Name: "m", Version: "1", Type: "chat", ContextWindow: 100}}}, words: []string{"a"}}
	svc := assistant.NewService(failingCharges{assistantsql.New(db)}, eng, assistant.Config{Log: slog.New(slog.NewTextHandler(&logged, nil))})
	cr, err := svc.CreateClient(context.Background(), assistant.ScopePers, []assistant.Balance{{Model: "m", Tokens: cutBalance}})
	if err != nil {
		t.Fatal(err)
	}
	p := assistant.Principal{ClientID: cr.ClientID, Scope: assistant.ScopePers}
	ctx, cancel := context.WithCancel(context.Background())
	eng.cancel = cancel
	_, err = svc.Run(ctx, scriptedChat(t, svc, p, "hi"), func(assistant.Delta) error { return nil })
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "the database is gone") {
		t.Errorf("Run: %v", err)
	}
	if !strings.Contains(logged.String(), "billing a chat the client cut short failed") || !strings.Contains(logged.String(), cr.ClientID) {
		t.Errorf("log: %q", logged.String())
	}
}

// TestCutCorpUsageIsRecorded: a postpaid client's chat cut short adds what
// it consumed to the client's recorded usage, as a finished one does.
func TestCutCorpUsageIsRecorded(t *testing.T) {
	eng := &scriptEngine{fakeEngine: fakeEngine{[]assistant.ModelInfo{{Name: "m", Version: "1", Type: "chat", ContextWindow: 100}}}, words: []string{"a", "b"}, hang: true}
	svc, _ := prepaid(t, eng, "m")
	cr, err := svc.CreateClient(context.Background(), assistant.ScopeCorp, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := assistant.Principal{ClientID: cr.ClientID, Scope: assistant.ScopeCorp}
	ctx, cancel := context.WithCancel(context.Background())
	relayed := 0
	_, err = svc.Run(ctx, scriptedChat(t, svc, p, "three prompt words"), func(assistant.Delta) error {
		if relayed++; relayed == 2 {
			cancel()
		}
		return nil
	})
	cancel()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v", err)
	}
	us, err := svc.Usage(context.Background(), cr.ClientID)
	if err != nil || len(us) != 1 || us[0].Tokens != 3+2 {
		t.Errorf("usage %+v %v, want 5 tokens of m", us, err)
	}
}
