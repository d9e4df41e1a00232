package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"partnerapi/internal/assistant"
)

func fake(t testing.TB, h http.HandlerFunc) *Engine {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return New(srv.URL, srv.Client())
}

func sse(w http.ResponseWriter, lines ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, l := range lines {
		fmt.Fprintf(w, "data: %s\n\n", l)
		w.(http.Flusher).Flush()
	}
}

func TestGenerate(t *testing.T) {
	tests := []struct {
		name    string
		lines   []string
		status  int
		want    string
		finish  string
		usage   assistant.Usage
		wantErr error
	}{
		{"stream with usage", []string{
			`{"choices":[{"index":0,"delta":{"content":"Hel"}}]}`,
			`{"choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":"length"}]}`,
			`{"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":2}}`, "[DONE]"},
			200, "Hello", "length", assistant.Usage{PromptTokens: 7, CompletionTokens: 2}, nil},
		// Without streamed usage the upstream's tokenizer counts the
		// messages ("hi\n": 3 bytes, one token each here) and the text.
		{"no usage defaults stop", []string{`{"choices":[{"index":0,"delta":{"content":"x"}}]}`, "[DONE]"},
			200, "x", "stop", assistant.Usage{PromptTokens: 3, CompletionTokens: 1}, nil},
		{"negative usage", []string{`{"choices":[{"index":0,"delta":{"content":"x"}}]}`,
			`{"choices":[],"usage":{"prompt_tokens":-5,"completion_tokens":2}}`, "[DONE]"},
			200, "x", "stop", assistant.Usage{PromptTokens: 0, CompletionTokens: 2}, nil},
		{"context overflow", nil, 400, "", "", assistant.Usage{}, assistant.ErrContextWindow},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := fake(t, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/tokenize" {
					byteTokens(w, r)
					return
				}
				if r.URL.Path != "/v1/chat/completions" {
					http.NotFound(w, r)
					return
				}
				if tc.status != 200 {
					http.Error(w, `{"error":{"message":"the request exceeds the available context size"}}`, tc.status)
					return
				}
				sse(w, tc.lines...)
			})
			var got strings.Builder
			res, err := e.Generate(context.Background(), assistant.GenerateRequest{Model: "m", N: 1,
				Messages: []assistant.Message{{Role: "user", Content: "hi"}}}, func(d assistant.Delta) error {
				got.WriteString(d.Text)
				return nil
			})
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err %v, want %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if got.String() != tc.want || res.Choices[0].Text != tc.want || res.Choices[0].FinishReason != tc.finish || res.Usage != tc.usage {
				t.Fatalf("got %q %+v", got.String(), res)
			}
		})
	}
}

// byteTokens answers POST /tokenize with one token per byte of content.
func byteTokens(w http.ResponseWriter, r *http.Request) {
	var req struct{ Content string }
	_ = json.NewDecoder(r.Body).Decode(&req)
	toks := make([]int, len(req.Content))
	_ = json.NewEncoder(w).Encode(map[string]any{"tokens": toks})
}

// An upstream that streams no usage and has no tokenizer (Ollama, or a
// vLLM behind a gateway that does not pass /tokenize on) still reports, and
// bills, what it generated: the four-bytes-a-token
// estimate of the messages, each choice's text and its call's arguments.
// The server is a vLLM (its models are owned by "vllm"), so it answers both
// choices in one stream.
func TestGenerateUsageWithoutTokenizer(t *testing.T) {
	e := fake(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			fmt.Fprint(w, `{"object":"list","data":[{"id":"m","object":"model","owned_by":"vllm"}]}`)
			return
		}
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		sse(w, `{"choices":[{"index":0,"delta":{"content":"Hello there"}}]}`,
			`{"choices":[{"index":1,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"get","arguments":"{\"q\":1}"}}]},"finish_reason":"tool_calls"}]}`,
			"[DONE]")
	})
	res, err := e.Generate(context.Background(), assistant.GenerateRequest{Model: "m", N: 2,
		Messages: []assistant.Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Say hello"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := assistant.Usage{
		PromptTokens:     EstimateTokens("Be brief.\nSay hello\n"),
		CompletionTokens: EstimateTokens("Hello there") + EstimateTokens(`get{"q":1}`),
	}
	if res.Usage != want || res.Choices[1].FinishReason != "function_call" {
		t.Fatalf("usage %+v, want %+v (choices %+v)", res.Usage, want, res.Choices)
	}
}

func TestGenerateCancel(t *testing.T) {
	closed := make(chan struct{})
	e := fake(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		sse(w, `{"choices":[{"index":0,"delta":{"content":"a"}}]}`)
		<-r.Context().Done() // the client must close the upstream request
		close(closed)
	})
	ctx, cancel := context.WithCancel(context.Background())
	_, err := e.Generate(ctx, assistant.GenerateRequest{Model: "m", N: 1}, func(assistant.Delta) error { cancel(); return nil })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("upstream request not closed")
	}
}

func TestModelsAndCount(t *testing.T) {
	e := fake(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/models":
			fmt.Fprint(w, `{"data":[{"id":"qwen","owned_by":"me"}]}`)
		case "/tokenize":
			fmt.Fprint(w, `{"tokens":[1,2,3]}`)
		default:
			http.NotFound(w, r)
		}
	})
	ms, err := e.Models(context.Background())
	if err != nil || len(ms) != 1 || ms[0].Name != "qwen" {
		t.Fatalf("%v %v", ms, err)
	}
	if n, err := e.CountTokens(context.Background(), "qwen", "hello world"); n != 3 || err != nil {
		t.Fatalf("%d %v", n, err)
	}
	noTok := fake(t, http.NotFound)
	if n, _ := noTok.CountTokens(context.Background(), "qwen", "12345"); n != 2 {
		t.Fatalf("estimate %d", n)
	}
}

// TestRepetitionPenaltyNames checks that the penalty reaches both servers:
// llama-server reads repeat_penalty, vLLM repetition_penalty, and each
// ignores the other's name. The neutral 1 is not sent at all.
func TestRepetitionPenaltyNames(t *testing.T) {
	var sent []map[string]any
	e := fake(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		sent = append(sent, body)
		sse(w, `{"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}]}`,
			`{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1}}`, "[DONE]")
	})
	for _, p := range []float64{1.3, 1} {
		if _, err := e.Generate(context.Background(), assistant.GenerateRequest{Model: "m", N: 1, RepetitionPenalty: p,
			Messages: []assistant.Message{{Role: "user", Content: "hi"}}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if len(sent) != 2 {
		t.Fatalf("%d requests", len(sent))
	}
	if sent[0]["repeat_penalty"] != 1.3 || sent[0]["repetition_penalty"] != 1.3 {
		t.Errorf("penalty 1.3 sent as repeat_penalty %v, repetition_penalty %v", sent[0]["repeat_penalty"], sent[0]["repetition_penalty"])
	}
	_, a := sent[1]["repeat_penalty"]
	_, b := sent[1]["repetition_penalty"]
	if a || b {
		t.Errorf("the neutral penalty was sent: %v", sent[1])
	}
}

// top_p goes out as the client gave it; an explicit 0 (only the most
// probable token) is asked as temperature 0, since vLLM refuses a top_p of
// 0, and an absent one is not sent at all.
func TestTopPSent(t *testing.T) {
	tests := []struct {
		name     string
		topP     float64
		set      bool
		wantTopP any // nil: absent
		wantTemp float64
	}{
		{"given", 0.5, true, 0.5, 0.7},
		{"explicit zero", 0, true, nil, 0},
		{"absent", 0, false, nil, 0.7},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := (&Engine{}).requestBody(assistant.GenerateRequest{Model: "m", Temperature: 0.7, TopP: tc.topP, TopPSet: tc.set}, 1)
			if got := body["top_p"]; got != tc.wantTopP {
				t.Errorf("top_p %v, want %v", got, tc.wantTopP)
			}
			if got := body["temperature"]; got != tc.wantTemp {
				t.Errorf("temperature %v, want %v", got, tc.wantTemp)
			}
		})
	}
}

// TestGreedyTemperatureSent: a temperature below 0.001 is greedy decoding
// in this API (reference §3.2), so the upstream is asked for temperature
// 0, which every server reads as greedy, rather than sampling at 0.0005;
// from 0.001 on the client's temperature goes out as it is.
func TestGreedyTemperatureSent(t *testing.T) {
	for _, tc := range []struct{ temperature, want float64 }{
		{0, 0}, {0.0005, 0}, {0.000999, 0}, {0.001, 0.001}, {0.87, 0.87}, {2, 2},
	} {
		var sent map[string]any
		e := fake(t, func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/v1/chat/completions" {
				http.NotFound(w, r)
				return
			}
			_ = json.NewDecoder(r.Body).Decode(&sent)
			sse(w, `{"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}]}`, "[DONE]")
		})
		req := assistant.GenerateRequest{Model: "m", N: 1, Temperature: tc.temperature, TopP: 0.47,
			Messages: []assistant.Message{{Role: "user", Content: "hi"}}}
		if _, err := e.Generate(context.Background(), req, nil); err != nil {
			t.Fatalf("temperature %v: %v", tc.temperature, err)
		}
		if got := sent["temperature"]; got != tc.want {
			t.Errorf("temperature %v sent as %v, want %v", tc.temperature, got, tc.want)
		}
	}
}

// TestFannedOutCachedTokens: n choices fanned out as n requests bill the
// prompt once, and of what their streams report reused from the cache,
// the least stands for it, so that no choice's reuse is credited for a
// prompt another stream paid for in full.
func TestFannedOutCachedTokens(t *testing.T) {
	var mu sync.Mutex
	cached := []int{30, 10, 20}
	e := fake(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		c := cached[0]
		cached = cached[1:]
		mu.Unlock()
		sse(w, `{"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}],"usage":{"prompt_tokens":40,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":`+strconv.Itoa(c)+`}}}`, "[DONE]")
	})
	res, err := e.Generate(context.Background(), assistant.GenerateRequest{Model: "m", N: 3, Temperature: 1,
		Messages: []assistant.Message{{Role: "user", Content: "hi"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := (assistant.Usage{PromptTokens: 40, CompletionTokens: 3, PrecachedPromptTokens: 10}); res.Usage != want {
		t.Fatalf("usage %+v, want %+v", res.Usage, want)
	}
}
