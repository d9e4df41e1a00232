package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"partnerapi/internal/assistant"
)

// TestToolCallsRoundTrip checks both directions of the translation: this
// API's functions, function_call and passed-back calls go out as OpenAI
// tools, tool_choice, tool_calls and tool messages; streamed tool-call
// fragments come back as one function_call with object arguments.
func TestToolCallsRoundTrip(t *testing.T) {
	var sent map[string]any
	e := fake(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &sent); err != nil {
			t.Error(err)
		}
		sse(w,
			`{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_x","type":"function","function":{"name":"weather_forecast","arguments":""}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"location\": \"Ман"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"жерок\", \"num_days\": 10}"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
			`{"choices":[],"usage":{"prompt_tokens":30,"completion_tokens":9}}`, "[DONE]")
	})
	e.Serve("GigaChat", Served{Remote: "qwen2.5"})
	req := assistant.GenerateRequest{Model: "GigaChat", N: 1,
		Messages: []assistant.Message{
			{Role: "user", Content: "x"},
			{Role: "assistant", FunctionCall: &assistant.FunctionCall{Name: "f", Arguments: json.RawMessage(`{"a":1}`)}, FunctionsStateID: "abc"},
			{Role: "function", Name: "f", Content: `{"r":1}`},
			{Role: "user", Content: "and tomorrow?"},
		},
		Functions:    []assistant.Function{{Name: "weather_forecast", Description: "d", Parameters: json.RawMessage(`{"type":"object"}`)}, {Name: "f"}},
		FunctionCall: assistant.FunctionChoice{Mode: assistant.FunctionCallName, Name: "weather_forecast"},
	}
	var deltas []string
	res, err := e.Generate(context.Background(), req, func(d assistant.Delta) error { deltas = append(deltas, d.Text); return nil })
	if err != nil {
		t.Fatal(err)
	}
	ch := res.Choices[0]
	if len(deltas) != 0 || ch.FinishReason != "function_call" || ch.FunctionCall == nil ||
		ch.FunctionCall.Name != "weather_forecast" || string(ch.FunctionCall.Arguments) != `{"location":"Манжерок","num_days":10}` {
		t.Fatalf("deltas %q result %+v", deltas, ch)
	}
	if res.Usage != (assistant.Usage{PromptTokens: 30, CompletionTokens: 9}) {
		t.Fatalf("usage %+v", res.Usage)
	}
	got, _ := json.Marshal(map[string]any{"model": sent["model"], "messages": sent["messages"], "tools": sent["tools"], "tool_choice": sent["tool_choice"]})
	want := `{"messages":[{"content":"x","role":"user"},` +
		`{"content":"","role":"assistant","tool_calls":[{"function":{"arguments":"{\"a\":1}","name":"f"},"id":"abc","type":"function"}]},` +
		`{"content":"{\"r\":1}","name":"f","role":"tool","tool_call_id":"abc"},{"content":"and tomorrow?","role":"user"}],` +
		`"model":"qwen2.5","tool_choice":{"function":{"name":"weather_forecast"},"type":"function"},` +
		`"tools":[{"function":{"description":"d","name":"weather_forecast","parameters":{"type":"object"}},"type":"function"},{"function":{"name":"f"},"type":"function"}]}`
	if string(got) != want {
		t.Fatalf("sent  %s\nwant %s", got, want)
	}
}

func TestToolCallOutcomes(t *testing.T) {
	tests := []struct {
		name   string
		lines  []string
		finish string
		call   string // name:arguments, "" for none
		text   string
	}{
		{"arguments split mid-token", []string{
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":"{\"a\""}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":": [1, 2]}"}}]},"finish_reason":"tool_calls"}]}`,
		}, "function_call", `f:{"a":[1,2]}`, ""},
		{"only the first of two calls", []string{
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"a","arguments":"{}"}},{"index":1,"function":{"name":"b","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`,
		}, "function_call", `a:{}`, ""},
		{"invalid JSON arguments", []string{
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":"{\"a\": "}}]},"finish_reason":"tool_calls"}]}`,
		}, "error", "", ""},
		{"legacy function_call delta", []string{
			`{"choices":[{"index":0,"delta":{"function_call":{"name":"f","arguments":"{\"b\":true}"}},"finish_reason":"function_call"}]}`,
		}, "function_call", `f:{"b":true}`, ""},
		{"text, then a call, finish stop", []string{
			`{"choices":[{"index":0,"delta":{"content":"Checking."}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":"{}"}}]},"finish_reason":"stop"}]}`,
		}, "function_call", `f:{}`, "Checking."},
		{"content filter is blacklist", []string{
			`{"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"content_filter"}]}`,
		}, "blacklist", "", "x"},
		{"a reason of the server's own is a stop", []string{
			`{"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"eos_token"}]}`,
		}, "stop", "", "x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := fake(t, func(w http.ResponseWriter, r *http.Request) { sse(w, append(tc.lines, "[DONE]")...) })
			res, err := e.Generate(context.Background(), assistant.GenerateRequest{Model: "m", N: 1}, func(assistant.Delta) error { return nil })
			if err != nil {
				t.Fatal(err)
			}
			ch := res.Choices[0]
			call := ""
			if ch.FunctionCall != nil {
				call = ch.FunctionCall.Name + ":" + string(ch.FunctionCall.Arguments)
			}
			if ch.FinishReason != tc.finish || call != tc.call || ch.Text != tc.text {
				t.Fatalf("finish %q call %q text %q", ch.FinishReason, call, ch.Text)
			}
		})
	}
}

func TestFunctionCallModes(t *testing.T) {
	for mode, want := range map[string]string{"": `"auto"`, "auto": `"auto"`, "none": `"none"`} {
		var sent map[string]json.RawMessage
		e := fake(t, func(w http.ResponseWriter, r *http.Request) {
			_ = json.NewDecoder(r.Body).Decode(&sent)
			sse(w, "[DONE]")
		})
		_, err := e.Generate(context.Background(), assistant.GenerateRequest{Model: "m", N: 1,
			Functions: []assistant.Function{{Name: "f"}}, FunctionCall: assistant.FunctionChoice{Mode: mode}}, nil)
		if err != nil || string(sent["tool_choice"]) != want {
			t.Errorf("mode %q: tool_choice %s, want %s (%v)", mode, sent["tool_choice"], want, err)
		}
	}
	var sent map[string]json.RawMessage
	e := fake(t, func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewDecoder(r.Body).Decode(&sent)
		sse(w, "[DONE]")
	})
	if _, err := e.Generate(context.Background(), assistant.GenerateRequest{Model: "m", N: 1}, nil); err != nil || sent["tools"] != nil || sent["tool_choice"] != nil {
		t.Errorf("no functions: tools %s tool_choice %s (%v)", sent["tools"], sent["tool_choice"], err)
	}
}

func TestEmbed(t *testing.T) {
	var models []string
	e := fake(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/embeddings":
			var req struct{ Model, Input string }
			_ = json.NewDecoder(r.Body).Decode(&req)
			models = append(models, req.Model)
			if req.Input == "no usage" {
				w.Write([]byte(`{"data":[{"embedding":[0.5,-1]}]}`))
				return
			}
			if req.Input == "a negative usage" {
				w.Write([]byte(`{"data":[{"embedding":[1]}],"usage":{"prompt_tokens":-40}}`))
				return
			}
			w.Write([]byte(`{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.25,0.75]}],"usage":{"prompt_tokens":` + map[bool]string{true: "2", false: "5"}[req.Input == "ab"] + `,"total_tokens":5}}`))
		default:
			http.NotFound(w, r)
		}
	})
	e.Serve("Embeddings", Served{Remote: "nomic-embed-text", Type: assistant.TypeEmbedder})
	got, err := e.Embed(context.Background(), "Embeddings", []string{"ab", "longer text", "no usage", "a negative usage"})
	if err != nil {
		t.Fatal(err)
	}
	// "no usage" falls back to the 4-bytes-per-token estimate (8 bytes → 2),
	// and so does a negative count, which billed would credit the client
	// (16 bytes → 4).
	if len(got) != 4 || got[0].PromptTokens != 2 || got[1].PromptTokens != 5 || got[2].PromptTokens != 2 || got[3].PromptTokens != 4 ||
		got[0].Vector[1] != 0.75 || got[2].Vector[1] != -1 || strings.Join(models, ",") != "nomic-embed-text,nomic-embed-text,nomic-embed-text,nomic-embed-text" {
		t.Fatalf("%+v models %v", got, models)
	}
	if _, err := e.Embed(context.Background(), "chat-model", []string{"x"}); !errors.Is(err, assistant.ErrNotEmbedder) {
		t.Fatalf("chat model: %v", err)
	}
	if info := e.ModelInfo("Embeddings"); info.Type != "embedder" || info.SupportsFunctions {
		t.Fatalf("info %+v", info)
	}
}

func TestUnavailable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there any more: connections are refused
	e := New(url, nil)
	_, err := e.Generate(context.Background(), assistant.GenerateRequest{Model: "m", N: 1}, nil)
	if !errors.Is(err, assistant.ErrUnavailable) {
		t.Fatalf("err %v, want ErrUnavailable", err)
	}
}

func TestProviderRoles(t *testing.T) {
	got, _ := json.Marshal(openAIMessages([]assistant.Message{
		{Role: "user", Content: "q"}, {Role: "search_result", Content: "found"}, {Role: "function_in_progress", Content: "working"},
		{Role: "function", Name: "orphan", Content: "{}"},
	}))
	want := `[{"content":"q","role":"user"},{"content":"found","role":"user"},{"content":"{}","name":"orphan","role":"tool","tool_call_id":"call_orphan"}]`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}
