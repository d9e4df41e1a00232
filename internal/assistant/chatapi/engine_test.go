package chatapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"partnerapi/internal/assistant"
	"partnerapi/internal/inference/local"
	"partnerapi/internal/testenv"
)

// These tests drive the in-process engine's scheduling through the HTTP
// API: its busy error, the prefix cache's count in the usage of JSON and
// SSE answers, and what a client hanging up mid-stream leaves behind.

// openLocalEngine serves stories260K (a symlink, never a copy) with the
// model's whole context window and opts.
func openLocalEngine(t *testing.T, opts local.Options) *local.Engine {
	t.Helper()
	dir := t.TempDir()
	if err := os.Symlink(testenv.Model(t, "stories260K.gguf"), filepath.Join(dir, "stories260K.gguf")); err != nil {
		t.Fatal(err)
	}
	eng, err := local.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	return eng
}

func engineStats(t *testing.T, eng *local.Engine) local.Stats {
	t.Helper()
	st := eng.Stats()
	if len(st) != 1 {
		t.Fatalf("stats %+v", st)
	}
	return st[0]
}

// heldEngine is the local engine with a gate in the emit of requests whose
// last message says "hold": such a request keeps its batch slot, after its
// first text, until the gate opens, so that the slots and the queue can be
// filled deterministically. Generation itself is the engine's.
type heldEngine struct {
	*local.Engine
	held chan struct{} // receives when a held request has its first text
	gate chan struct{} // closed to let held requests go on
}

func (e *heldEngine) Generate(ctx context.Context, req assistant.GenerateRequest, emit func(assistant.Delta) error) (assistant.Result, error) {
	if req.Messages[len(req.Messages)-1].Content == "hold" {
		inner, first := emit, true
		emit = func(d assistant.Delta) error {
			if first {
				first = false
				e.held <- struct{}{}
				select {
				case <-e.gate:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			if inner == nil {
				return nil
			}
			return inner(d)
		}
	}
	return e.Engine.Generate(ctx, req, emit)
}

// TestEngineBusyError fills the engine's only batch slot and its one-place
// queue, then expects the next requests, JSON and streamed, to be refused
// at once with the API's own 429 envelope and Retry-After (reference §4,
// §10), although the client is far below its own limit of 10; the held
// and the queued request still complete.
func TestEngineBusyError(t *testing.T) {
	eng := &heldEngine{Engine: openLocalEngine(t, local.Options{Concurrency: 1, QueueDepth: 1}),
		held: make(chan struct{}, 1), gate: make(chan struct{})}
	f := newFixtureWith(t, eng)
	tok := f.token(f.client(assistant.ScopeCorp), "ASSISTANT_API_CORP")
	body := func(content, extra string) string {
		return `{"model":"stories260K","messages":[{"role":"user","content":"` + content + `"}],"temperature":0,"max_tokens":8` + extra + `}`
	}
	// A failure below opens the gate too, so that the held and the queued
	// request end and the server can close.
	openGate := sync.OnceFunc(func() { close(eng.gate) })
	defer openGate()
	var wg sync.WaitGroup
	statuses := make([]int, 2)
	for i, b := range []string{body("hold", `,"stream":true`), body("Once upon a time", "")} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("POST", f.url+"/api/v1/chat/completions", strings.NewReader(b))
			req.Header.Set("Authorization", "Bearer "+tok)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			_, _ = io.Copy(io.Discard, resp.Body)
			statuses[i] = resp.StatusCode
		}()
		if i == 0 {
			<-eng.held
		}
	}
	for deadline := time.Now().Add(5 * time.Second); engineStats(t, eng.Engine).QueuedRequests != 1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			openGate()
			t.Fatal("the second request never queued")
		}
	}
	// The slot and the queue stay taken until the refusals have come (the
	// gate opens after them), so a refused request that waited for a slot
	// instead of failing at once would never get one: it ends at its
	// 30 s deadline, without the 429, and fails the test. How long the
	// refusal took is not checked, since a loaded machine stretches it.
	for _, extra := range []string{"", `,"stream":true`} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		req, _ := http.NewRequestWithContext(ctx, "POST", f.url+"/api/v1/chat/completions", strings.NewReader(body("The cat", extra)))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		resp, b := f.do(req) // a request that ends at its deadline fails here
		cancel()
		if resp.StatusCode != http.StatusTooManyRequests || strings.TrimSpace(string(b)) != `{"status":429,"message":"Too Many Requests"}` ||
			!strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") || resp.Header.Get("Retry-After") == "" {
			t.Errorf("busy engine%s: %d %q %s (Retry-After %q)", extra, resp.StatusCode, resp.Header.Get("Content-Type"), b, resp.Header.Get("Retry-After"))
		}
	}
	openGate()
	wg.Wait()
	if statuses[0] != 200 || statuses[1] != 200 {
		t.Errorf("held and queued requests: %v", statuses)
	}
	if st := engineStats(t, eng.Engine); st.QueuedRequests != 0 || st.ActiveRequests != 0 {
		t.Errorf("after: %+v", st)
	}
}

type usageBody struct {
	Prompt     int `json:"prompt_tokens"`
	Completion int `json:"completion_tokens"`
	Total      int `json:"total_tokens"`
	Precached  int `json:"precached_prompt_tokens"`
}

// answerOf reads a chat answer, JSON or SSE: the text of choice 0 and the
// usage (an SSE stream's from its event before [DONE], the only one that
// may carry it).
func answerOf(t *testing.T, body []byte, stream bool) (string, usageBody) {
	t.Helper()
	var ev struct {
		Choices []struct {
			Message struct{ Content string } `json:"message"`
			Delta   struct{ Content string } `json:"delta"`
			Index   int                      `json:"index"`
		} `json:"choices"`
		Usage *usageBody `json:"usage"`
	}
	if !stream {
		if err := json.Unmarshal(body, &ev); err != nil || ev.Usage == nil {
			t.Fatalf("answer %s: %v", body, err)
		}
		return ev.Choices[0].Message.Content, *ev.Usage
	}
	checkSSE(t, body)
	var text strings.Builder
	var u usageBody
	for _, e := range strings.Split(strings.TrimSuffix(string(body), "\n\ndata: [DONE]\n\n"), "\n\n") {
		ev.Usage = nil
		if err := json.Unmarshal([]byte(strings.TrimPrefix(e, "data: ")), &ev); err != nil {
			t.Fatalf("event %q: %v", e, err)
		}
		for _, c := range ev.Choices {
			if c.Index == 0 {
				text.WriteString(c.Delta.Content)
			}
		}
		if ev.Usage != nil {
			u = *ev.Usage
		}
	}
	return text.String(), u
}

// TestPrecachedPromptTokensOverHTTP sends requests that share a prompt
// prefix with earlier ones, as JSON and as SSE, and checks the count of
// reused prompt tokens in the usage each answer carries (for a stream, in
// its final event), and that reuse does not change the text: the first
// turn's answer is what a fresh engine gives.
func TestPrecachedPromptTokensOverHTTP(t *testing.T) {
	sys := `{"role":"system","content":"Lily and Tom went to the park."}`
	first := `[` + sys + `,{"role":"user","content":"Once upon a time"}]`
	next := `[` + sys + `,{"role":"user","content":"Once upon a time"},{"role":"assistant","content":", there was a little girl"},{"role":"user","content":"The sun was"}]`
	otherUser := `[` + sys + `,{"role":"user","content":"The dog ran"}]`
	for _, stream := range []bool{false, true} {
		name := map[bool]string{false: "json", true: "sse"}[stream]
		t.Run(name, func(t *testing.T) {
			f := newFixtureWith(t, openLocalEngine(t, local.Options{}))
			tok := f.token(f.client(assistant.ScopeCorp), "ASSISTANT_API_CORP")
			chat := func(messages string) (string, usageBody) {
				t.Helper()
				resp, body := f.call("POST", "/api/v1/chat/completions", tok,
					`{"model":"stories260K","messages":`+messages+`,"temperature":0,"max_tokens":12,"stream":`+map[bool]string{false: "false", true: "true"}[stream]+`}`)
				if resp.StatusCode != 200 {
					t.Fatalf("%d %s", resp.StatusCode, body)
				}
				return answerOf(t, body, stream)
			}
			coldText, cold := chat(first)
			for _, c := range []struct {
				name     string
				messages string
				// want is the least count of reused prompt tokens, given
				// the first prompt's length and this one's; the count never
				// includes the last prompt token, whose logits are needed.
				want func(first, prompt int) int
			}{
				{"same conversation again", first, func(_, p int) int { return p - 1 }},
				{"the conversation's next turn", next, func(f, _ int) int { return f - 1 }},
				{"another user message after the same system prompt", otherUser, func(int, int) int { return 12 }},
			} {
				text, u := chat(c.messages)
				t.Logf("%s: %+v (first prompt %d)", c.name, u, cold.Prompt)
				// prompt_tokens leaves out the reused tokens (reference
				// §3.3), so the whole prompt is the two together.
				whole := u.Prompt + u.Precached
				if min := c.want(cold.Prompt, whole); u.Precached < min || u.Prompt < 1 {
					t.Errorf("%s: precached_prompt_tokens %d of %d prompt tokens, want at least %d", c.name, u.Precached, whole, min)
				}
				if u.Total != u.Prompt+u.Completion {
					t.Errorf("%s: usage %+v", c.name, u)
				}
				if c.messages == first && text != coldText {
					t.Errorf("%s: %q, the first time %q", c.name, text, coldText)
				}
			}
			if cold.Precached != 0 {
				t.Errorf("a cold engine reused %d prompt tokens", cold.Precached)
			}
		})
	}
}

// TestStreamDisconnectFreesEngine hangs up in the middle of a two-choice
// SSE stream and checks the engine's side, which TestStreamDisconnect does
// not see: the request leaves the batch with both sequences, their KV
// memory goes back to the model's pool (not to the prefix cache, and not
// kept by a sequence that is gone), the engine's only batch slot is free
// for the next request at once, and that request, on the same prompt,
// gets what a fresh engine gives although it runs in the cancelled
// stream's memory.
func TestStreamDisconnectFreesEngine(t *testing.T) {
	eng := openLocalEngine(t, local.Options{Concurrency: 1, QueueDepth: 1})
	f := newFixtureWith(t, eng)
	tok := f.token(f.client(assistant.ScopeCorp), "ASSISTANT_API_CORP")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", f.url+"/api/v1/chat/completions",
		strings.NewReader(`{"model":"stories260K","messages":[{"role":"user","content":"Once upon a time"}],"temperature":0,"max_tokens":2000,"n":2,"stream":true}`))
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	// Some events in, the stream is running: stories260K does not end a
	// greedy story within 2 000 tokens.
	buf := make([]byte, 4096)
	for events := 0; events < 10; {
		n, err := resp.Body.Read(buf)
		if err != nil {
			t.Fatalf("stream ended after %d events: %v", events, err)
		}
		events += strings.Count(string(buf[:n]), "data: ")
	}
	during := engineStats(t, eng)
	cancel()
	resp.Body.Close()
	if during.ActiveRequests != 1 || during.ActiveSequences != 2 || during.KVBytes == 0 {
		t.Fatalf("while streaming: %+v", during)
	}
	var after local.Stats
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		after = engineStats(t, eng)
		if after.ActiveRequests == 0 && after.ActiveSequences == 0 && after.KVBytes == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("5s after the client hung up: %+v", after)
		}
	}
	if after.CachedPrompts != during.CachedPrompts || after.PooledKVBytes < during.KVBytes || after.PrefillingRequests != 0 || after.QueuedRequests != 0 {
		t.Errorf("after the hang-up: %+v (while streaming: %+v)", after, during)
	}
	// The only batch slot is free: the next request does not wait for it.
	quick := func(e *local.Engine) assistant.Result {
		t.Helper()
		qctx, stop := context.WithTimeout(context.Background(), 2*time.Second)
		defer stop()
		res, err := e.Generate(qctx, assistant.GenerateRequest{Model: "stories260K", Messages: []assistant.Message{{Role: "user", Content: "Once upon a time"}}, MaxTokens: 30, N: 2}, nil)
		if err != nil {
			t.Fatalf("after the hang-up: %v", err)
		}
		return res
	}
	got, want := quick(eng), quick(openLocalEngine(t, local.Options{}))
	if fmt.Sprint(got.Choices, got.Usage.CompletionTokens) != fmt.Sprint(want.Choices, want.Usage.CompletionTokens) {
		t.Errorf("after the hang-up:\n%+v\non a fresh engine:\n%+v", got, want)
	}
}
