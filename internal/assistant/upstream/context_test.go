package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"partnerapi/internal/assistant"
)

// fakeVLLM enforces a context window as vLLM does: a prompt at or over it,
// or a prompt plus max_tokens over it, is refused with a 400 in one of
// vLLM's wordings; without max_tokens the completion may fill the room
// left. A prompt is its messages' words plus two template tokens each, so
// only the server knows its exact size; its /tokenize counts a text's
// words.
type fakeVLLM struct {
	window     int
	listLen    bool   // /v1/models names max_model_len
	wording    string // "new", "old" or "bare" (no prompt size)
	noTokenize bool   // /tokenize is not found (a gateway that does not pass it on)
	mu         sync.Mutex
	sentMax    []any // max_tokens of each chat request, nil when absent
	complete   int   // completion tokens of the last answer
	tokenize   int   // requests to /tokenize
}

// tokenizeVLLM answers POST /tokenize as vLLM does: the text is "prompt",
// BOS is added unless add_special_tokens is false, and a field it does not
// know is refused, as older releases refused them (later ones log a warning
// for every such request).
func (f *fakeVLLM) tokenizeVLLM(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.tokenize++
	f.mu.Unlock()
	if f.noTokenize {
		http.NotFound(w, r)
		return
	}
	var req map[string]any
	_ = json.NewDecoder(r.Body).Decode(&req)
	prompt, ok := req["prompt"].(string)
	for k := range req {
		if k != "model" && k != "prompt" && k != "add_special_tokens" {
			ok = false
		}
	}
	if !ok {
		http.Error(w, `{"object":"error","message":"Field required","type":"BadRequestError","code":400}`, http.StatusBadRequest)
		return
	}
	n := len(strings.Fields(prompt))
	if req["add_special_tokens"] != false {
		n++ // BOS
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"count": n, "max_model_len": f.window, "tokens": make([]int, n)})
}

func (f *fakeVLLM) promptTokens(msgs []struct{ Content string }) int {
	n := 0
	for _, m := range msgs {
		n += len(strings.Fields(m.Content)) + 2
	}
	return n
}

func (f *fakeVLLM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/v1/models":
		if f.listLen {
			fmt.Fprintf(w, `{"object":"list","data":[{"id":"m","object":"model","owned_by":"vllm","max_model_len":%d}]}`, f.window)
		} else {
			fmt.Fprint(w, `{"object":"list","data":[{"id":"m","object":"model","owned_by":"vllm"}]}`)
		}
		return
	case "/v1/chat/completions":
	case "/tokenize":
		f.tokenizeVLLM(w, r)
		return
	default:
		http.NotFound(w, r)
		return
	}
	var req struct {
		Messages  []struct{ Content string }
		MaxTokens *int `json:"max_tokens"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	prompt := f.promptTokens(req.Messages)
	f.mu.Lock()
	if req.MaxTokens == nil {
		f.sentMax = append(f.sentMax, nil)
	} else {
		f.sentMax = append(f.sentMax, *req.MaxTokens)
	}
	f.mu.Unlock()
	refuse := func(msg string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"object":"error","message":%q,"type":"BadRequestError","param":null,"code":400}`, msg)
	}
	if prompt >= f.window {
		refuse(fmt.Sprintf("This model's maximum context length is %d tokens. However, your request has %d input tokens. Please reduce the length of the input messages.", f.window, prompt))
		return
	}
	room := f.window - prompt
	if req.MaxTokens != nil && *req.MaxTokens > room {
		switch f.wording {
		case "old":
			refuse(fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.", f.window, prompt+*req.MaxTokens, prompt, *req.MaxTokens))
		case "bare":
			refuse("Requested tokens exceed context length")
		default:
			refuse(fmt.Sprintf("'max_tokens' or 'max_completion_tokens' is too large: %d. This model's maximum context length is %d tokens and your request has %d input tokens (%d > %d - %d). None", *req.MaxTokens, f.window, prompt, *req.MaxTokens, f.window, prompt))
		}
		return
	}
	n := room
	if req.MaxTokens != nil {
		n = *req.MaxTokens
	}
	f.mu.Lock()
	f.complete = n
	f.mu.Unlock()
	sse(w, `{"choices":[{"index":0,"delta":{"content":"Once"},"finish_reason":"length"}]}`,
		fmt.Sprintf(`{"choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d}}`, prompt, n), "[DONE]")
}

// TestMaxTokensClampedToContext checks reference §3.2/§6 against a vLLM
// that enforces its context: a client's huge max_tokens (999999999) gets
// the room its prompt leaves, never 413; only a prompt that alone fills
// the window is ErrContextWindow.
func TestMaxTokensClampedToContext(t *testing.T) {
	short := []assistant.Message{{Role: "user", Content: "tell me a story"}} // 4 words + 2 = 6 tokens, 94 left
	long := []assistant.Message{{Role: "user", Content: strings.Repeat("word ", 120)}}
	tests := []struct {
		name      string
		f         *fakeVLLM
		msgs      []assistant.Message
		maxTokens int
		wantSent  []any // max_tokens of each request the upstream saw
		wantDone  int   // completion tokens it allowed
		wantErr   error
	}{
		// The window is known from /v1/models: one request, without a
		// max_tokens (vLLM's default is the room left).
		{"known window", &fakeVLLM{window: 100, listLen: true}, short, 999999999, []any{nil}, 94, nil},
		{"known window, fitting max_tokens", &fakeVLLM{window: 100, listLen: true}, short, 50, []any{50}, 50, nil},
		// Unknown window: the refusal names it and the prompt's size, and
		// the one retry asks for exactly the room left.
		{"new wording", &fakeVLLM{window: 100, wording: "new"}, short, 999999999, []any{999999999, 94}, 94, nil},
		{"old wording", &fakeVLLM{window: 100, wording: "old"}, short, 999999999, []any{999999999, 94}, 94, nil},
		{"modest max_tokens over the room", &fakeVLLM{window: 100, listLen: true}, short, 99, []any{99, 94}, 94, nil},
		// A refusal without the sizes: retried without max_tokens.
		{"bare wording", &fakeVLLM{window: 100, wording: "bare"}, short, 999999999, []any{999999999, nil}, 94, nil},
		{"prompt over the window", &fakeVLLM{window: 100, wording: "new"}, long, 999999999, []any{999999999}, 0, assistant.ErrContextWindow},
		// vLLM's /tokenize counts the text alone at 120 tokens: over the
		// known window before anything is generated.
		{"prompt over the known window", &fakeVLLM{window: 100, listLen: true}, long, 999999999, nil, 0, assistant.ErrContextWindow},
		// Without /tokenize vLLM itself refuses it.
		{"prompt over the known window, no tokenizer", &fakeVLLM{window: 100, listLen: true, noTokenize: true}, long, 999999999, []any{nil}, 0, assistant.ErrContextWindow},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.f
			e := fake(t, f.ServeHTTP)
			res, err := e.Generate(context.Background(), assistant.GenerateRequest{Model: "m", N: 1, MaxTokens: tc.maxTokens, Messages: tc.msgs}, nil)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err %v, want %v", err, tc.wantErr)
			}
			if fmt.Sprint(f.sentMax) != fmt.Sprint(tc.wantSent) {
				t.Errorf("upstream saw max_tokens %v, want %v", f.sentMax, tc.wantSent)
			}
			if err == nil && (res.Usage.CompletionTokens != tc.wantDone || f.complete != tc.wantDone) {
				t.Errorf("completion %d tokens (upstream %d), want %d", res.Usage.CompletionTokens, f.complete, tc.wantDone)
			}
		})
	}
}

// An upstream that refused /tokenize is not asked again for a while: a
// vLLM with a known window behind a gateway that does not pass /tokenize on
// would otherwise take a failed round trip before every chat request.
func TestTokenizeRefusalRemembered(t *testing.T) {
	f := &fakeVLLM{window: 100, listLen: true, noTokenize: true}
	e := fake(t, f.ServeHTTP)
	for i := 0; i < 3; i++ {
		req := assistant.GenerateRequest{Model: "m", N: 1, MaxTokens: 999999999, Messages: []assistant.Message{{Role: "user", Content: "tell me a story"}}}
		if _, err := e.Generate(context.Background(), req, nil); err != nil {
			t.Fatal(err)
		}
	}
	if f.tokenize != 1 {
		t.Fatalf("/tokenize asked %d times over three requests, want 1", f.tokenize)
	}
}

// TestTokenizeShapes checks that CountTokens gets real counts from both
// kinds of /tokenize, each asked in its own shape: vLLM's "prompt" (without
// BOS) when its model list showed vLLM, llama-server's "content" otherwise,
// the other shape once when the first is refused, and from then on the one
// that worked. Without a /tokenize the count is the estimate.
func TestTokenizeShapes(t *testing.T) {
	const text = "tell me a story please" // 5 words, 22 bytes
	llama := func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/models":
			fmt.Fprint(w, `{"object":"list","data":[{"id":"m","object":"model","owned_by":"llamacpp"}]}`)
		case "/tokenize":
			byteTokens(w, r)
		default:
			http.NotFound(w, r)
		}
	}
	tests := []struct {
		name     string
		h        http.HandlerFunc
		listed   bool // the model list was fetched before counting
		want     int  // each of two counts
		requests int  // to /tokenize over both
	}{
		{"vLLM, listed", (&fakeVLLM{window: 100, listLen: true}).ServeHTTP, true, 5, 2},
		{"vLLM, not listed yet", (&fakeVLLM{window: 100}).ServeHTTP, false, 5, 3},
		{"llama-server", llama, true, 22, 2},
		{"llama-server behind a vLLM-looking list", func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v1/models" {
				fmt.Fprint(w, `{"object":"list","data":[{"id":"m","object":"model","owned_by":"vllm"}]}`)
				return
			}
			llama(w, r)
		}, true, 22, 3},
		{"no tokenizer", (&fakeVLLM{window: 100, listLen: true, noTokenize: true}).ServeHTTP, true, EstimateTokens(text), 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			requests := 0
			e := fake(t, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/tokenize" {
					mu.Lock()
					requests++
					mu.Unlock()
				}
				tc.h(w, r)
			})
			if tc.listed {
				if _, err := e.Models(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			for i := 0; i < 2; i++ {
				n, err := e.CountTokens(context.Background(), "m", text)
				if err != nil || n != tc.want {
					t.Fatalf("count %d: %d tokens (%v), want %d", i+1, n, err, tc.want)
				}
			}
			if requests != tc.requests {
				t.Errorf("%d requests to /tokenize, want %d", requests, tc.requests)
			}
		})
	}
}

// TestMaxTokensClampedLlamaServer checks the clamp against a llama-server,
// which names its context in /props and counts tokens at /tokenize: a
// huge max_tokens is sent as the room the prompt leaves, and a prompt
// over the window is ErrContextWindow without generating.
func TestMaxTokensClampedLlamaServer(t *testing.T) {
	e, sent := llamaServerWithContext(t, `{"object":"list","data":[{"id":"m","object":"model","owned_by":"llamacpp","meta":{"n_ctx_train":32768}}]}`)
	gen := func(content string) error {
		_, err := e.Generate(context.Background(), assistant.GenerateRequest{Model: "m", N: 1, MaxTokens: 999999999,
			Messages: []assistant.Message{{Role: "user", Content: content}}}, nil)
		return err
	}
	// "hi\n" is three tokens at byteTokens' one a byte.
	if err := gen("hi"); err != nil {
		t.Fatal(err)
	}
	if err := gen(strings.Repeat("x", 100)); !errors.Is(err, assistant.ErrContextWindow) {
		t.Fatalf("a prompt over n_ctx: err %v, want ErrContextWindow", err)
	}
	if fmt.Sprint(sent()) != "[61]" {
		t.Fatalf("upstream saw max_tokens %v, want [61]", sent())
	}
}

// TestPromptCheckedAgainstKnownWindow checks that a llama-server's prompt
// is judged against the window /props names whatever max_tokens is (older
// builds would truncate it and answer 200), and that a max_tokens under the
// window but over the room left is clamped to the room.
func TestPromptCheckedAgainstKnownWindow(t *testing.T) {
	e, sent := llamaServerWithContext(t, `{"object":"list","data":[{"id":"m","object":"model","owned_by":"llamacpp"}]}`)
	gen := func(content string, maxTokens int) error {
		_, err := e.Generate(context.Background(), assistant.GenerateRequest{Model: "m", N: 1, MaxTokens: maxTokens,
			Messages: []assistant.Message{{Role: "user", Content: content}}}, nil)
		return err
	}
	long := strings.Repeat("x", 100)
	for _, maxTokens := range []int{0, 10} {
		if err := gen(long, maxTokens); !errors.Is(err, assistant.ErrContextWindow) {
			t.Errorf("a prompt over n_ctx with max_tokens %d: err %v, want ErrContextWindow", maxTokens, err)
		}
	}
	// "hi\n" is three tokens at byteTokens' one a byte: 61 left.
	for _, maxTokens := range []int{0, 50, 63} {
		if err := gen("hi", maxTokens); err != nil {
			t.Fatal(err)
		}
	}
	if fmt.Sprint(sent()) != "[<nil> 50 61]" {
		t.Fatalf("upstream saw max_tokens %v, want [<nil> 50 61] and no request for the long prompt", sent())
	}
}

// TestTruncatedFlag checks an older llama-server that truncates a prompt
// over its context and answers 200, with no window to check it against
// beforehand (no /props): the truncated flag of its last chunk, at the top
// (llama.cpp's native final response) or in __verbose (the OpenAI endpoint
// under --verbose), makes the answer ErrContextWindow, even after text was
// streamed; false changes nothing.
func TestTruncatedFlag(t *testing.T) {
	tests := []struct {
		name, last string
		wantErr    error
	}{
		{"verbose", `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"object":"chat.completion.chunk","usage":{"prompt_tokens":2048,"completion_tokens":1},"__verbose":{"content":"","stop":true,"tokens_evaluated":2048,"truncated":true}}`, assistant.ErrContextWindow},
		{"top level", `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"stop":true,"tokens_evaluated":2048,"truncated":true}`, assistant.ErrContextWindow},
		{"not truncated", `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":20,"completion_tokens":1},"__verbose":{"truncated":false}}`, nil},
	}
	for _, tc := range tests {
		for _, streaming := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, streaming %v", tc.name, streaming), func(t *testing.T) {
				e := fake(t, func(w http.ResponseWriter, r *http.Request) {
					switch r.URL.Path {
					case "/v1/models":
						fmt.Fprint(w, `{"object":"list","data":[{"id":"m","object":"model","owned_by":"llamacpp"}]}`)
					case "/tokenize":
						byteTokens(w, r)
					case "/v1/chat/completions":
						sse(w, `{"choices":[{"index":0,"delta":{"role":"assistant","content":"Once"}}],"object":"chat.completion.chunk"}`, tc.last, "[DONE]")
					default:
						http.NotFound(w, r)
					}
				})
				var emit func(assistant.Delta) error
				var got strings.Builder
				if streaming {
					emit = func(d assistant.Delta) error { got.WriteString(d.Text); return nil }
				}
				_, err := e.Generate(context.Background(), assistant.GenerateRequest{Model: "m", N: 1, MaxTokens: 999999999,
					Messages: []assistant.Message{{Role: "user", Content: "a long story"}}}, emit)
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err %v, want %v", err, tc.wantErr)
				}
				if streaming && got.String() != "Once" {
					t.Fatalf("streamed %q before the flag, want %q", got.String(), "Once")
				}
			})
		}
	}
}

// llamaServerWithContext is a llama-server with a 64-token context (/props), a
// tokenizer of one token a byte (/tokenize) and the model list given; sent
// returns the max_tokens of each chat request it saw, nil where absent.
func llamaServerWithContext(t *testing.T, models string) (e *Engine, sent func() []any) {
	var mu sync.Mutex
	var maxTokens []any
	e = fake(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/models":
			fmt.Fprint(w, models)
		case "/props":
			fmt.Fprint(w, `{"default_generation_settings":{"n_ctx":64},"total_slots":1}`)
		case "/tokenize":
			byteTokens(w, r)
		case "/v1/chat/completions":
			var req struct {
				MaxTokens *int `json:"max_tokens"`
			}
			_ = json.NewDecoder(r.Body).Decode(&req)
			mu.Lock()
			if req.MaxTokens == nil {
				maxTokens = append(maxTokens, nil)
			} else {
				maxTokens = append(maxTokens, *req.MaxTokens)
			}
			mu.Unlock()
			sse(w, `{"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}]}`, "[DONE]")
		default:
			http.NotFound(w, r)
		}
	})
	return e, func() []any {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(maxTokens)
	}
}
