package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"partnerapi/internal/assistant"
)

// streamTransport answers every request with one fixed body: the chat
// stream for /v1/chat/completions, a 404 for /tokenize (so the usage
// fallback estimates), without a socket per fuzz input.
type streamTransport []byte

func (b streamTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		r.Body.Close()
	}
	if r.URL.Path != "/v1/chat/completions" {
		return &http.Response{StatusCode: http.StatusNotFound, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
	}
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(bytes.NewReader(b)), Request: r}, nil
}

// FuzzGenerateStream feeds arbitrary server-sent event streams to the
// upstream reader. Whatever an upstream sends, Generate must not panic,
// and an answer it accepts must hold this API's invariants: one choice
// per index requested, a finish reason of the API's four, each choice's
// text exactly what was relayed for it, a call only with a name and a
// JSON object of arguments, and usage that is never negative.
func FuzzGenerateStream(f *testing.F) {
	f.Add([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"), uint8(1))
	f.Add([]byte("data: {\"choices\":[{\"index\":1,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\"\"}}]}}]}\n"+
		"data: {\"choices\":[{\"index\":1,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\":1}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n"+
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":4,\"completion_tokens\":-3}}\ndata: [DONE]\n"), uint8(2))
	f.Add([]byte(": comment\nevent: x\ndata: {\"error\":{\"message\":\"context length\"}}\n"), uint8(1))
	f.Add([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"function_call\":{\"name\":\"g\",\"arguments\":\"[]\"}}}]}\ndata: [DONE]\n"), uint8(1))
	f.Add([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"},\"finish_reason\":\"function_call\"}]}\ndata: [DONE]\n"), uint8(1))
	f.Fuzz(func(t *testing.T, body []byte, n uint8) {
		choices := int(n%4) + 1
		e := New("http://upstream.invalid", &http.Client{Transport: streamTransport(body)})
		relayed := make([]strings.Builder, choices)
		res, err := e.Generate(context.Background(), assistant.GenerateRequest{Model: "m", N: choices,
			Messages: []assistant.Message{{Role: "user", Content: "hi"}}}, func(d assistant.Delta) error {
			if d.Index < 0 || d.Index >= choices {
				t.Fatalf("delta for choice %d of %d", d.Index, choices)
			}
			relayed[d.Index].WriteString(d.Text)
			return nil
		})
		if err != nil {
			return
		}
		if len(res.Choices) != choices {
			t.Fatalf("%d choices, want %d", len(res.Choices), choices)
		}
		for i, ch := range res.Choices {
			if ch.Index != i {
				t.Fatalf("choice %d has index %d", i, ch.Index)
			}
			switch ch.FinishReason {
			case "stop", "length", "function_call", "error":
			default:
				t.Fatalf("choice %d finish reason %q", i, ch.FinishReason)
			}
			if ch.Text != relayed[i].String() {
				t.Fatalf("choice %d text %q, relayed %q", i, ch.Text, relayed[i].String())
			}
			if ch.FinishReason == "function_call" && ch.FunctionCall == nil {
				t.Fatalf("choice %d finished function_call without a call", i)
			}
			if fc := ch.FunctionCall; fc != nil {
				var obj map[string]json.RawMessage
				if fc.Name == "" || json.Unmarshal(fc.Arguments, &obj) != nil || obj == nil || ch.FinishReason != "function_call" {
					t.Fatalf("choice %d call %q %s finish %q", i, fc.Name, fc.Arguments, ch.FinishReason)
				}
			}
		}
		if res.Usage.PromptTokens < 0 || res.Usage.CompletionTokens < 0 {
			t.Fatalf("usage %+v", res.Usage)
		}
	})
}
