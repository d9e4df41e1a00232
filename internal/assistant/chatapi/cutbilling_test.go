package chatapi

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/assistant"
	"partnerapi/internal/inference/local"
)

// These tests hang up on chats the in-process engine is generating and
// check the prepaid balance: a generation the client cut short is billed
// for its prompt and the tokens generated up to the cut, once, and one that
// fails on our side is not billed at all.

// stallEngine is the local engine whose deltas stop reaching the transport
// after the first `after`, as with a client that stops reading: the next
// emit waits for the request's cancellation. The engine meanwhile generates
// on (up to max_tokens), all of which the scheduler counts. The stall makes
// the cut come before the end of generation on any machine, however fast.
type stallEngine struct {
	*local.Engine
	after   int
	stalled chan struct{} // receives once the stall begins
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

const cutBalance = 1_000_000

// promptTokens is the prompt the engine computes for one user message,
// asked of the engine itself with no prefix cache to reuse.
func promptTokens(t *testing.T, eng *local.Engine, content string) int {
	t.Helper()
	res, err := eng.Generate(context.Background(), assistant.GenerateRequest{Model: "stories260K",
		Messages: []assistant.Message{{Role: "user", Content: content}}, MaxTokens: 1, N: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res.Usage.PromptTokens
}

// spentAfter waits until the client's request has let go of its
// concurrency slot (a PERS client has one), which happens after Run has
// billed, and returns how much of the balance is gone.
func spentAfter(t *testing.T, svc *assistant.Service, p assistant.Principal, model string) int64 {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		release, err := svc.Acquire(context.Background(), p)
		if err == nil {
			release()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the request never let go of its slot")
		}
	}
	bs, err := svc.Balance(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bs {
		if b.Model == model {
			return cutBalance - b.Tokens
		}
	}
	t.Fatalf("no balance for %s: %+v", model, bs)
	return 0
}

func persClient(t *testing.T, f *fixture, model string) (assistant.Principal, string) {
	t.Helper()
	c := f.client(assistant.ScopePers, assistant.Balance{Model: model, Tokens: cutBalance})
	return assistant.Principal{ClientID: c.ClientID, Scope: assistant.ScopePers}, f.token(c, "GIGACHAT_API_PERS")
}

// TestCutStreamIsBilled drops an SSE stream after a few chunks: the
// balance goes down by the prompt and at least the tokens whose text
// arrived, and by no more than the prompt and max_tokens.
func TestCutStreamIsBilled(t *testing.T) {
	const content, maxTokens, chunks = "Once upon a time", 100, 4
	eng := &stallEngine{Engine: openLocalEngine(t, local.Options{PrefixCache: -1}), after: chunks, stalled: make(chan struct{}, 1)}
	prompt := promptTokens(t, eng.Engine, content)
	f := newFixtureWith(t, eng)
	p, tok := persClient(t, f, "stories260K")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", f.url+"/api/v1/chat/completions",
		strings.NewReader(`{"model":"stories260K","messages":[{"role":"user","content":"`+content+`"}],"temperature":0,"max_tokens":100,"stream":true}`))
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	events := 0
	buf := make([]byte, 4096)
	for events < chunks {
		n, err := resp.Body.Read(buf)
		if err != nil {
			t.Fatalf("stream ended after %d events: %v", events, err)
		}
		events += strings.Count(string(buf[:n]), "data: ")
	}
	<-eng.stalled
	cancel()
	resp.Body.Close()
	spent := spentAfter(t, f.svc, p, "stories260K")
	t.Logf("prompt %d tokens, %d chunks received, %d tokens billed", prompt, events, spent)
	if spent < int64(prompt+events) || spent > int64(prompt+maxTokens) {
		t.Errorf("billed %d tokens for a stream cut after %d chunks, want %d..%d", spent, events, prompt+events, prompt+maxTokens)
	}
}

// TestCutJSONRequestIsBilled abandons a request without streaming in the
// middle of its generation.
func TestCutJSONRequestIsBilled(t *testing.T) {
	const content, maxTokens = "The cat sat", 60
	eng := &stallEngine{Engine: openLocalEngine(t, local.Options{PrefixCache: -1}), after: 3, stalled: make(chan struct{}, 1)}
	prompt := promptTokens(t, eng.Engine, content)
	f := newFixtureWith(t, eng)
	p, tok := persClient(t, f, "stories260K")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", f.url+"/api/v1/chat/completions",
		strings.NewReader(`{"model":"stories260K","messages":[{"role":"user","content":"`+content+`"}],"temperature":0,"max_tokens":60}`))
	req.Header.Set("Authorization", "Bearer "+tok)
	done := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			err = errors.New("answered " + resp.Status)
		}
		done <- err
	}()
	<-eng.stalled
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("the abandoned request: %v", err)
	}
	spent := spentAfter(t, f.svc, p, "stories260K")
	t.Logf("prompt %d tokens, %d tokens billed", prompt, spent)
	if spent < int64(prompt+3) || spent > int64(prompt+maxTokens) {
		t.Errorf("billed %d tokens for an abandoned request, want %d..%d", spent, prompt+3, prompt+maxTokens)
	}
}

// failingEngine streams a little text and then fails on its own, having
// consumed tokens it reports.
type failingEngine struct{ toolEngine }

func (failingEngine) Generate(_ context.Context, _ assistant.GenerateRequest, emit func(assistant.Delta) error) (assistant.Result, error) {
	if emit != nil {
		if err := emit(assistant.Delta{Text: "Once upon"}); err != nil {
			return assistant.Result{}, err
		}
	}
	return assistant.Result{Usage: assistant.Usage{PromptTokens: 40, CompletionTokens: 3}}, errors.New("the engine broke")
}

// TestOwnFailureIsNotBilled: a generation that fails on our side, before
// its stream started (500), or in the middle of it (the in-band error
// event), bills nothing, and the error event reports no usage either.
func TestOwnFailureIsNotBilled(t *testing.T) {
	f := newFixtureWith(t, failingEngine{})
	p, tok := persClient(t, f, "plain")
	resp, body := f.call("POST", "/api/v1/chat/completions", tok, `{"model":"plain","messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != http.StatusInternalServerError {
		t.Errorf("JSON: %d %s", resp.StatusCode, body)
	}
	resp, body = f.call("POST", "/api/v1/chat/completions", tok, `{"model":"plain","messages":[{"role":"user","content":"hi"}],"stream":true}`)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"finish_reason":"error"`) || !strings.Contains(string(body), `"total_tokens":0`) {
		t.Errorf("stream: %d %s", resp.StatusCode, body)
	}
	if spent := spentAfter(t, f.svc, p, "plain"); spent != 0 {
		t.Errorf("our own failures billed %d tokens", spent)
	}
}
