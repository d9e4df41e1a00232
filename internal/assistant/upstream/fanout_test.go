package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"partnerapi/internal/assistant"
)

// fakeLlamaServer acts as llama-server does for n: a chat request with n
// other than 1 is refused with its 400, any other is answered with one
// choice whose text names the request's seed, streamed in two deltas, and
// with usage. It records what each request asked and how many ran at once.
type fakeLlamaServer struct {
	delay time.Duration // how long each answer takes
	// together, when set, holds every chat request until that many have
	// run at once (or its client gave up), so that a test of how many a
	// replica runs at once sees them overlap however slowly a loaded
	// machine starts them: with delay alone, a request started more than
	// delay after the first found it ended.
	together int

	mu      sync.Mutex
	ns      []any // n of each chat request, nil when absent
	seeds   []any
	running int
	most    int
	met     chan struct{} // closed once together run at once
	metDone bool
}

func (f *fakeLlamaServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/v1/models":
		fmt.Fprint(w, `{"object":"list","data":[{"id":"m","object":"model","created":1,"owned_by":"llamacpp","meta":{"n_ctx_train":32768}}]}`)
		return
	case "/tokenize":
		byteTokens(w, r)
		return
	case "/v1/chat/completions":
	default:
		http.NotFound(w, r)
		return
	}
	var req map[string]any
	_ = json.NewDecoder(r.Body).Decode(&req)
	f.mu.Lock()
	f.ns = append(f.ns, req["n"])
	f.seeds = append(f.seeds, req["seed"])
	f.running++
	f.most = max(f.most, f.running)
	if f.together > 0 && f.met == nil {
		f.met = make(chan struct{})
	}
	met := f.met
	if met != nil && f.running >= f.together && !f.metDone {
		close(met)
		f.metDone = true
	}
	f.mu.Unlock()
	// A request stops counting as running before its last byte goes out:
	// the client may start the next one as soon as it has read it.
	finished := func() {
		f.mu.Lock()
		f.running--
		f.mu.Unlock()
	}
	if n, ok := req["n"]; ok && n != 1.0 {
		finished()
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":{"code":400,"message":"Only one completion choice is allowed","type":"invalid_request_error"}}`)
		return
	}
	if met != nil {
		select {
		case <-met:
		case <-r.Context().Done():
			finished()
			return
		}
	}
	time.Sleep(f.delay)
	sse(w, `{"choices":[{"index":0,"delta":{"role":"assistant","content":"seed "}}]}`,
		fmt.Sprintf(`{"choices":[{"index":0,"delta":{"content":"%v"},"finish_reason":"stop"}]}`, req["seed"]),
		`{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`)
	finished()
	sse(w, "[DONE]")
}

// TestFanOutLlamaServer checks n > 1 against a llama-server, which refuses
// n != 1: the choices are asked as one request each, with seeds of their
// own, their deltas reach emit by choice index one at a time (the race
// detector watches the unguarded test emit), and usage counts the prompt
// once and every completion.
func TestFanOutLlamaServer(t *testing.T) {
	f := &fakeLlamaServer{}
	e := fake(t, f.ServeHTTP)
	streamed := map[int]string{}
	res, err := e.Generate(context.Background(), assistant.GenerateRequest{Model: "m", N: 3, Seed: 10,
		Messages: []assistant.Message{{Role: "user", Content: "hi"}}}, func(d assistant.Delta) error {
		streamed[d.Index] += d.Text
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Choices) != 3 {
		t.Fatalf("%d choices", len(res.Choices))
	}
	for i, ch := range res.Choices {
		want := fmt.Sprintf("seed %d", 10+i)
		if ch.Index != i || ch.Text != want || ch.FinishReason != "stop" || streamed[i] != want {
			t.Errorf("choice %d: %+v, streamed %q, want %q", i, ch, streamed[i], want)
		}
	}
	if res.Usage != (assistant.Usage{PromptTokens: 5, CompletionTokens: 6}) {
		t.Errorf("usage %+v, want the prompt once and three completions", res.Usage)
	}
	if fmt.Sprint(f.ns) != "[1 1 1]" {
		t.Errorf("upstream saw n %v, want three requests of one", f.ns)
	}
}

// TestFanOutOllama checks n > 1 against an Ollama, which ignores n and
// answers choice 0 alone, here without streamed usage (older builds) and
// without a tokenizer: every choice gets its text, and usage is estimated
// with the prompt once.
func TestFanOutOllama(t *testing.T) {
	e := fake(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/models":
			fmt.Fprint(w, `{"object":"list","data":[{"id":"llama3:latest","object":"model","created":1,"owned_by":"library"}]}`)
		case "/v1/chat/completions":
			sse(w, `{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello there"},"finish_reason":null}]}`,
				`{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"stop"}]}`, "[DONE]")
		default:
			http.NotFound(w, r)
		}
	})
	res, err := e.Generate(context.Background(), assistant.GenerateRequest{Model: "llama3:latest", N: 2,
		Messages: []assistant.Message{{Role: "user", Content: "Say hello"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Choices) != 2 || res.Choices[0].Text != "Hello there" || res.Choices[1].Text != "Hello there" || res.Choices[1].Index != 1 {
		t.Fatalf("choices %+v", res.Choices)
	}
	want := assistant.Usage{PromptTokens: EstimateTokens("Say hello\n"), CompletionTokens: 2 * EstimateTokens("Hello there")}
	if res.Usage != want {
		t.Fatalf("usage %+v, want %+v", res.Usage, want)
	}
}

// TestNativeN checks that a vLLM, which generates n choices itself, is
// asked once for all of them; and that a server whose model list looks
// like vLLM's but which refuses n (a gateway in front of a llama-server)
// gets the choices fanned out, at once and from then on.
func TestNativeN(t *testing.T) {
	t.Run("vLLM", func(t *testing.T) {
		var ns []any
		e := fake(t, func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v1/models" {
				fmt.Fprint(w, `{"object":"list","data":[{"id":"m","object":"model","owned_by":"vllm","max_model_len":4096}]}`)
				return
			}
			if r.URL.Path != "/v1/chat/completions" {
				// vLLM's /tokenize wants "prompt", not llama-server's "content".
				http.Error(w, `{"error":{"message":"Field required"}}`, http.StatusBadRequest)
				return
			}
			var req map[string]any
			_ = json.NewDecoder(r.Body).Decode(&req)
			ns = append(ns, req["n"])
			sse(w, `{"choices":[{"index":0,"delta":{"content":"a"}}]}`, `{"choices":[{"index":1,"delta":{"content":"b"}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"},{"index":1,"delta":{},"finish_reason":"length"}]}`,
				`{"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":2}}`, "[DONE]")
		})
		res, err := e.Generate(context.Background(), assistant.GenerateRequest{Model: "m", N: 2,
			Messages: []assistant.Message{{Role: "user", Content: "hi"}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(ns) != "[2]" || res.Choices[0].Text != "a" || res.Choices[1].Text != "b" || res.Choices[1].FinishReason != "length" ||
			res.Usage != (assistant.Usage{PromptTokens: 9, CompletionTokens: 2}) {
			t.Fatalf("upstream saw n %v; result %+v", ns, res)
		}
	})
	t.Run("refused", func(t *testing.T) {
		f := &fakeLlamaServer{}
		e := fake(t, func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v1/models" {
				fmt.Fprint(w, `{"object":"list","data":[{"id":"m","object":"model","owned_by":"vllm"}]}`)
				return
			}
			f.ServeHTTP(w, r)
		})
		for range 2 {
			res, err := e.Generate(context.Background(), assistant.GenerateRequest{Model: "m", N: 2, Seed: 1,
				Messages: []assistant.Message{{Role: "user", Content: "hi"}}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Choices[0].Text != "seed 1" || res.Choices[1].Text != "seed 2" {
				t.Fatalf("choices %+v", res.Choices)
			}
		}
		if fmt.Sprint(f.ns) != "[2 1 1 1 1]" {
			t.Fatalf("upstream saw n %v, want one refused request of two, then four of one", f.ns)
		}
	})
}

// TestFanOutBounded checks that at most FanOut choices are asked at once.
func TestFanOutBounded(t *testing.T) {
	f := &fakeLlamaServer{delay: 30 * time.Millisecond}
	e := fake(t, f.ServeHTTP)
	e.FanOut = 2
	res, err := e.Generate(context.Background(), assistant.GenerateRequest{Model: "m", N: 4, Seed: 1,
		Messages: []assistant.Message{{Role: "user", Content: "hi"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Choices) != 4 || res.Choices[3].Text != "seed 4" {
		t.Fatalf("choices %+v", res.Choices)
	}
	if f.most > 2 || len(f.ns) != 4 {
		t.Fatalf("%d requests, %d at once; want 4, at most 2 at once", len(f.ns), f.most)
	}
}

// TestFanOutFailure checks that one choice's failure ends the others: their
// upstream requests are closed, and the failure itself,
// not the cancellation it caused, is returned. A client that leaves ends
// them all with its context's error.
func TestFanOutFailure(t *testing.T) {
	var started, closed sync.WaitGroup
	started.Add(2)
	closed.Add(2)
	e := fake(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		var req struct{ Seed int }
		_ = json.NewDecoder(r.Body).Decode(&req)
		if req.Seed == 2 {
			// The second choice fails once the others are streaming.
			started.Wait()
			http.Error(w, `{"error":{"message":"CUDA out of memory"}}`, http.StatusInternalServerError)
			return
		}
		sse(w, `{"choices":[{"index":0,"delta":{"content":"a"}}]}`)
		started.Done()
		<-r.Context().Done()
		closed.Done()
	})
	var mu sync.Mutex
	var deltas []assistant.Delta
	_, err := e.Generate(context.Background(), assistant.GenerateRequest{Model: "m", N: 3, Seed: 1}, func(d assistant.Delta) error {
		mu.Lock()
		deltas = append(deltas, d)
		mu.Unlock()
		return nil
	})
	if err == nil || errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "CUDA out of memory") {
		t.Fatalf("err %v, want the failed choice's", err)
	}
	waitClosed(t, &closed)
	mu.Lock()
	n := len(deltas)
	mu.Unlock()
	if n > 2 {
		// Each streaming choice sent one delta before the failure; whether
		// it was read before the failure arrived is up to the scheduler.
		t.Fatalf("deltas %+v, want at most the two sent before the failure", deltas)
	}

	// The client leaves after its first delta: every request that reached
	// the upstream is closed (some may not have been sent at all).
	var mu2 sync.Mutex
	open := 0
	hang := fake(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		mu2.Lock()
		open++
		mu2.Unlock()
		sse(w, `{"choices":[{"index":0,"delta":{"content":"a"}}]}`)
		<-r.Context().Done()
		mu2.Lock()
		open--
		mu2.Unlock()
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err = hang.Generate(ctx, assistant.GenerateRequest{Model: "m", N: 3}, func(assistant.Delta) error { cancel(); return nil })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		mu2.Lock()
		left := open
		mu2.Unlock()
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d upstream requests not closed", left)
		}
	}
}

func waitClosed(t *testing.T, wg *sync.WaitGroup) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("upstream requests not closed")
	}
}
