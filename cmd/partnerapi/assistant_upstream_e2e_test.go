package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeOpenAI is an OpenAI-compatible server (as llama-server is) whose
// chat answer is chosen by the last user message, so one server can act
// out every case: a normal stream, a tool call, a context overflow, a 500,
// a stream cut mid-way and a stream that waits for the client to leave.
type fakeOpenAI struct {
	t        *testing.T
	mu       sync.Mutex
	requests []map[string]any // chat request bodies, in order
	hangDone chan struct{}    // closed when the "hang" request's context ends
}

func (f *fakeOpenAI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if r.Method == http.MethodPost {
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
	}
	switch r.URL.Path {
	case "/v1/models":
		fmt.Fprint(w, `{"object":"list","data":[{"id":"qwen2.5-7b","object":"model","owned_by":"fake"},{"id":"nomic-embed","object":"model","owned_by":"fake"}]}`)
	case "/tokenize":
		// One token per word, so counts are easy to predict.
		ids := make([]int, len(strings.Fields(body["content"].(string))))
		_ = json.NewEncoder(w).Encode(map[string]any{"tokens": ids})
	case "/v1/embeddings":
		in := body["input"].(string)
		fmt.Fprintf(w, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[%d,0.5]}],"usage":{"prompt_tokens":%d,"total_tokens":%d}}`,
			len(in), len(strings.Fields(in)), len(strings.Fields(in)))
	case "/v1/chat/completions":
		f.mu.Lock()
		f.requests = append(f.requests, body)
		f.mu.Unlock()
		if n, ok := body["n"]; ok && n != 1.0 {
			// llama-server's refusal of n != 1.
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":{"code":400,"message":"Only one completion choice is allowed","type":"invalid_request_error"}}`)
			return
		}
		msgs := body["messages"].([]any)
		f.chat(w, r, msgs[len(msgs)-1].(map[string]any)["content"].(string))
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeOpenAI) chat(w http.ResponseWriter, r *http.Request, prompt string) {
	event := func(s string) {
		fmt.Fprintf(w, "data: %s\n\n", s)
		w.(http.Flusher).Flush()
	}
	switch prompt {
	case "huge":
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":{"code":400,"message":"This model's maximum context length is 4096 tokens. However, you requested 9000 tokens.","type":"invalid_request_error"}}`)
		return
	case "boom":
		http.Error(w, `{"error":{"message":"CUDA out of memory"}}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	switch prompt {
	case "weather":
		event(`{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"weather_forecast","arguments":""}}]}}]}`)
		event(`{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"location\":\"Ман"}}]}}]}`)
		event(`{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"жерок\",\"num_days\":10}"}}]}}]}`)
		event(`{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`)
		event(`{"id":"c1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":278,"completion_tokens":35,"total_tokens":313}}`)
	case "cut":
		event(`{"choices":[{"index":0,"delta":{"role":"assistant","content":"Once"}}]}`)
		// The upstream dies mid-stream: the connection closes without
		// [DONE].
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
		return
	case "truncated":
		// An older llama-server run with --verbose: it cut the prompt to
		// its context, answered, and says so only in the last chunk.
		event(`{"choices":[{"index":0,"delta":{"role":"assistant","content":"Once"}}]}`)
		event(`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":4096,"completion_tokens":1},"__verbose":{"truncated":true}}`)
	case "hang":
		event(`{"choices":[{"index":0,"delta":{"role":"assistant","content":"Once"}}]}`)
		<-r.Context().Done()
		close(f.hangDone)
		return
	default:
		event(`{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`)
		event(`{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hel"}}]}`)
		event(`{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"lo."},"finish_reason":"stop"}]}`)
		event(`{"id":"c1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":17,"completion_tokens":3,"total_tokens":20}}`)
	}
	event("[DONE]")
}

// upstreamClient speaks to the assistant listener of a test server.
type upstreamClient struct {
	t     *testing.T
	base  string
	token string
}

func (c *upstreamClient) do(ctx context.Context, method, path, body string) (*http.Response, []byte) {
	c.t.Helper()
	req, _ := http.NewRequestWithContext(ctx, method, c.base+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp, b
}

var (
	e2eCreatedRE = regexp.MustCompile(`"created":\d+`)
	e2eStateRE   = regexp.MustCompile(`"functions_state_id":"[0-9a-f-]{36}"`)
)

func upstreamGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	got = e2eCreatedRE.ReplaceAll(got, []byte(`"created":0`))
	got = e2eStateRE.ReplaceAll(got, []byte(`"functions_state_id":"00000000-0000-0000-0000-000000000000"`))
	path := filepath.Join("testdata", "assistant_upstream", name)
	if os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with UPDATE_GOLDEN=1)", err)
	}
	if string(got) != string(want) {
		t.Fatalf("%s differs:\n got: %s\nwant: %s", name, got, want)
	}
}

// TestAssistantUpstreamEndToEnd runs `serve` with models routed by
// --assistant-upstream to a fake OpenAI-compatible server and walks a
// client through the API: token, models, chat, streaming chat, a function
// call, token counting, embeddings, the upstream's failures and a client
// that hangs up.
func TestAssistantUpstreamEndToEnd(t *testing.T) {
	fake := &fakeOpenAI{t: t, hangDone: make(chan struct{})}
	up := httptest.NewServer(fake)
	t.Cleanup(up.Close)
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close() // connections to it are refused from now on

	data := t.TempDir()
	// PERS: one request at a time, so a slot that is not freed shows at once.
	creds, err := createAssistantClient(t, data, "--scope", "ASSISTANT_API_PERS", "--balance", "GigaChat=100000", "--balance", "Embeddings=1000", "--balance", "down=1000")
	if err != nil {
		t.Fatal(err)
	}
	npmCreds, err := createAssistantClient(t, data, "--scope", "ASSISTANT_API_B2B", "--balance", "Embeddings=1000", "--balance", "GigaChat=1000")
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, "--data-dir", data, "--only", "assistant",
		"--assistant-upstream", "GigaChat="+up.URL+"#model=qwen2.5-7b",
		"--assistant-upstream", "Embeddings="+up.URL+"#model=nomic-embed&type=embedder",
		"--assistant-upstream", "down="+deadURL)
	base := ts.urls["assistant"]

	c := &upstreamClient{t: t, base: base, token: assistantToken(t, base, "GIGACHAT_API_PERS", creds["authorization_key"])}
	ctx := context.Background()

	t.Run("models", func(t *testing.T) {
		_, body := c.do(ctx, "GET", "/api/v1/models", "")
		want := `{"object":"list","data":[{"id":"Embeddings:1.0","object":"model","owned_by":"fake","type":"embedder"},{"id":"GigaChat:1.0","object":"model","owned_by":"fake","type":"chat"},{"id":"down:1.0","object":"model","owned_by":"upstream","type":"chat"}]}`
		if strings.TrimSpace(string(body)) != want {
			t.Fatalf("got  %s\nwant %s", body, want)
		}
	})
	chat := func(prompt, extra string) string {
		return `{"model":"GigaChat","messages":[{"role":"user","content":"` + prompt + `"}],"profanity_check":false` + extra + `}`
	}
	t.Run("chat", func(t *testing.T) {
		resp, body := c.do(ctx, "POST", "/api/v1/chat/completions", chat("hello", ""))
		if resp.StatusCode != 200 || resp.Header.Get("X-Request-Id") == "" {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
		upstreamGolden(t, "chat.json", body)
	})
	t.Run("stream", func(t *testing.T) {
		resp, body := c.do(ctx, "POST", "/api/v1/chat/completions", chat("hello", `,"stream":true`))
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("%d %q %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
		upstreamGolden(t, "stream.sse", body)
	})
	t.Run("stream, n=2", func(t *testing.T) {
		// The fake, as llama-server, answers one choice a request: the two
		// choices are two upstream requests, their deltas merged into one
		// stream by index, the prompt billed once.
		fake.mu.Lock()
		before := len(fake.requests)
		fake.mu.Unlock()
		resp, body := c.do(ctx, "POST", "/api/v1/chat/completions", chat("hello", `,"stream":true,"n":2`))
		if resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
		events := strings.Split(strings.TrimSuffix(string(body), "\n\n"), "\n\n")
		if events[len(events)-1] != "data: [DONE]" {
			t.Fatalf("stream does not end in [DONE]: %s", body)
		}
		text, roles := map[int]string{}, map[int]int{}
		type event struct {
			Choices []struct {
				Index        int
				FinishReason string `json:"finish_reason"`
				Delta        struct{ Content, Role string }
			}
			Usage *struct {
				PromptTokens     int `json:"prompt_tokens"`
				CompletionTokens int `json:"completion_tokens"`
			}
		}
		var last event
		for _, ev := range events[:len(events)-1] {
			last = event{}
			if err := json.Unmarshal([]byte(strings.TrimPrefix(ev, "data: ")), &last); err != nil {
				t.Fatalf("event %q: %v", ev, err)
			}
			for _, ch := range last.Choices {
				text[ch.Index] += ch.Delta.Content
				if ch.Delta.Role != "" {
					roles[ch.Index]++
				}
			}
		}
		if text[0] != "Hello." || text[1] != "Hello." || roles[0] != 1 || roles[1] != 1 || len(text) != 2 {
			t.Fatalf("texts %v, roles %v: %s", text, roles, body)
		}
		if len(last.Choices) != 2 || last.Choices[0].FinishReason != "stop" || last.Choices[1].FinishReason != "stop" ||
			last.Usage == nil || last.Usage.PromptTokens != 17 || last.Usage.CompletionTokens != 6 {
			t.Fatalf("final event %+v", last)
		}
		fake.mu.Lock()
		sent := fake.requests[before:]
		fake.mu.Unlock()
		if len(sent) != 2 || sent[0]["n"] != 1.0 || sent[1]["n"] != 1.0 {
			t.Fatalf("upstream requests %v, want two of n 1", sent)
		}
	})
	functions := `,"functions":[{"name":"weather_forecast","description":"Forecast","parameters":{"type":"object","properties":{"location":{"type":"string"},"num_days":{"type":"integer"}}}}],"function_call":"auto"`
	t.Run("function call", func(t *testing.T) {
		_, body := c.do(ctx, "POST", "/api/v1/chat/completions", chat("weather", functions))
		upstreamGolden(t, "function_call.json", body)
		_, body = c.do(ctx, "POST", "/api/v1/chat/completions", chat("weather", functions+`,"stream":true`))
		upstreamGolden(t, "function_call.sse", body)
		// The call and its result passed back reach the upstream as OpenAI
		// tool_calls and a tool message with the matching id.
		back := `{"model":"GigaChat","messages":[{"role":"user","content":"weather?"},` +
			`{"role":"assistant","content":"","function_call":{"name":"weather_forecast","arguments":{"location":"Oslo"}},"functions_state_id":"0199e210-2f13-744c-8fe5-c9a19fe27db7"},` +
			`{"role":"function","name":"weather_forecast","content":"{\"temperature\":3}"},{"role":"user","content":"hello"}]` + functions + `}`
		resp, body := c.do(ctx, "POST", "/api/v1/chat/completions", back)
		if resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
		fake.mu.Lock()
		last := fake.requests[len(fake.requests)-1]
		fake.mu.Unlock()
		got, _ := json.Marshal(last["messages"])
		want := `[{"content":"weather?","role":"user"},` +
			`{"content":"","role":"assistant","tool_calls":[{"function":{"arguments":"{\"location\":\"Oslo\"}","name":"weather_forecast"},"id":"0199e210-2f13-744c-8fe5-c9a19fe27db7","type":"function"}]},` +
			`{"content":"{\"temperature\":3}","name":"weather_forecast","role":"tool","tool_call_id":"0199e210-2f13-744c-8fe5-c9a19fe27db7"},{"content":"hello","role":"user"}]`
		if string(got) != want || last["model"] != "qwen2.5-7b" || last["tool_choice"] != "auto" {
			t.Fatalf("upstream got %s model %v tool_choice %v\nwant %s", got, last["model"], last["tool_choice"], want)
		}
	})
	t.Run("tokens count", func(t *testing.T) {
		_, body := c.do(ctx, "POST", "/api/v1/tokens/count", `{"model":"GigaChat","input":["one two three","Манжерок"]}`)
		if want := `[{"object":"tokens","tokens":3,"characters":13},{"object":"tokens","tokens":1,"characters":8}]`; strings.TrimSpace(string(body)) != want {
			t.Fatalf("got %s, want %s", body, want)
		}
	})
	t.Run("embeddings", func(t *testing.T) {
		_, body := c.do(ctx, "POST", "/api/v1/embeddings", `{"input":["First text","Second text here"],"model":"Embeddings"}`)
		want := `{"object":"list","model":"Embeddings","data":[{"object":"embedding","index":0,"embedding":[10,0.5],"usage":{"prompt_tokens":2}},{"object":"embedding","index":1,"embedding":[16,0.5],"usage":{"prompt_tokens":3}}]}`
		if strings.TrimSpace(string(body)) != want {
			t.Fatalf("got  %s\nwant %s", body, want)
		}
	})
	t.Run("failures", func(t *testing.T) {
		tests := []struct {
			name, body string
			status     int
			want       string
		}{
			{"context length", chat("huge", ""), 413, `{"status":413,"message":"Payload too large"}`},
			{"context length, stream", chat("huge", `,"stream":true`), 413, `{"status":413,"message":"Payload too large"}`},
			{"upstream 500", chat("boom", ""), 500, `{"status":500,"message":"Internal Server Error"}`},
			{"connection refused", `{"model":"down","messages":[{"role":"user","content":"hello"}],"stream":true}`, 503, `{"status":503,"message":"Service Unavailable"}`},
			{"cut before the answer was complete", chat("cut", ""), 500, `{"status":500,"message":"Internal Server Error"}`},
			{"prompt truncated by the upstream", chat("truncated", ""), 413, `{"status":413,"message":"Payload too large"}`},
			{"embeddings on a chat model", `{"input":["x"],"model":"GigaChat"}`, 422, `{"status":422,"message":"Requested model does not support embeddings"}`},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				path := "/api/v1/chat/completions"
				if strings.HasPrefix(tt.body, `{"input"`) {
					path = "/api/v1/embeddings"
				}
				resp, body := c.do(ctx, "POST", path, tt.body)
				if resp.StatusCode != tt.status || strings.TrimSpace(string(body)) != tt.want || resp.Header.Get("X-Request-Id") == "" {
					t.Fatalf("got %d %s, want %d %s", resp.StatusCode, body, tt.status, tt.want)
				}
			})
		}
		// A stream cut after its first delta can only end in-band.
		resp, body := c.do(ctx, "POST", "/api/v1/chat/completions", chat("cut", `,"stream":true`))
		if resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
		upstreamGolden(t, "stream_cut.sse", body)
		// A truncation the upstream owns to only at the end can only be
		// reported in-band too.
		resp, body = c.do(ctx, "POST", "/api/v1/chat/completions", chat("truncated", `,"stream":true`))
		if resp.StatusCode != 200 || !strings.Contains(string(body), `"finish_reason":"error"`) || !strings.HasSuffix(string(body), "data: [DONE]\n\n") {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
	})
	t.Run("client disconnect", func(t *testing.T) {
		hctx, cancel := context.WithCancel(ctx)
		req, _ := http.NewRequestWithContext(hctx, "POST", base+"/api/v1/chat/completions", strings.NewReader(chat("hang", `,"stream":true`)))
		req.Header.Set("Authorization", "Bearer "+c.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 6)
		if _, err := io.ReadFull(resp.Body, buf); err != nil || string(buf) != "data: " {
			t.Fatalf("first bytes %q %v", buf, err)
		}
		cancel()
		resp.Body.Close()
		select {
		case <-fake.hangDone:
		case <-time.After(10 * time.Second):
			t.Fatal("the upstream request was not closed after the client hung up")
		}
		// PERS allows one request at a time: the next one succeeds only if
		// the stream's slot was freed.
		deadline := time.Now().Add(10 * time.Second)
		for {
			resp, body := c.do(ctx, "POST", "/api/v1/chat/completions", chat("hello", ""))
			if resp.StatusCode == 200 {
				break
			}
			if resp.StatusCode != 429 || time.Now().After(deadline) {
				t.Fatalf("after the disconnect: %d %s", resp.StatusCode, body)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	t.Run("npm client", func(t *testing.T) {
		runNpmEmbeddings(t, base, npmCreds["authorization_key"])
	})
	t.Run("balance", func(t *testing.T) {
		_, body := c.do(ctx, "GET", "/api/v1/balance", "")
		var b struct {
			Balance []struct {
				Usage string `json:"usage"`
				Value int64  `json:"value"`
			} `json:"balance"`
		}
		if err := json.Unmarshal(body, &b); err != nil {
			t.Fatal(err)
		}
		got := map[string]int64{}
		for _, it := range b.Balance {
			got[it.Usage] = it.Value
		}
		// Embeddings: 2 + 3 tokens. GigaChat: four 20-token answers (chat,
		// stream, the passed-back call, after the disconnect), the two
		// choices of 17 + 3 + 3 tokens and two 313-token calls; the failures
		// bill nothing, and the hung-up stream, whose upstream reports no
		// usage, its prompt and its one delta as /tokenize counts them (1 + 1).
		if got["Embeddings"] != 1000-5 || got["GigaChat"] != 100000-4*20-23-2*313-2 {
			t.Fatalf("balances %v", got)
		}
	})
}

// runNpmEmbeddings runs clients/npm/embeddings.js, the unmodified npm
// `gigachat` client calling embeddings() and a chat with functions.
func runNpmEmbeddings(t *testing.T, base, key string) {
	node, pkg := npmClient(t, "the npm embeddings test")
	out, err := runClientScript(node, pkg, "embeddings.js", time.Minute, base, key, "GIGACHAT_API_B2B", "GigaChat")
	var res struct {
		Embeddings []struct {
			Index     int
			Embedding []float64
			Tokens    int
		}
		Call struct {
			Finish       string
			FunctionCall struct {
				Name      string
				Arguments map[string]any
			} `json:"function_call"`
			StateID string `json:"state_id"`
		}
	}
	npmResult(t, out, err, &res)
	if len(res.Embeddings) != 2 || res.Embeddings[1].Index != 1 || res.Embeddings[1].Embedding[0] != 16 || res.Embeddings[1].Tokens != 3 {
		t.Errorf("embeddings %+v", res.Embeddings)
	}
	if res.Call.Finish != "function_call" || res.Call.FunctionCall.Name != "weather_forecast" ||
		res.Call.FunctionCall.Arguments["location"] != "Манжерок" || len(res.Call.StateID) != 36 {
		t.Errorf("function call %+v", res.Call)
	}
}
