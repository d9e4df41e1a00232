package chatapi

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"partnerapi/internal/assistant"
	"partnerapi/internal/assistant/upstream/upstreamtest"
)

// upCall is an upstream's streamed call of name, with its usage.
func upCall(name string) []string {
	return []string{
		`{"choices":[{"index":0,"delta":{"role":"assistant","content":"Checking."}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"` + name + `","arguments":"{\"location\":\"X\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":5,"completion_tokens":7}}`,
		"[DONE]",
	}
}

// TestUpstreamCallsOfferedFunctionsOnly: a call an upstream returns parsed
// is passed on only when it is of a function the request offered and its
// function_call allows, as a text-only engine's parsed call is. A server
// may call a tool it was never offered or ignore tool_choice, and a client
// runs a function_call finish as a call of one of its own functions (an
// agent fails on a tool it does not have), so any other call ends the
// choice with finish_reason "error" (reference §3.3), its text kept, in
// the JSON answer and the stream alike.
func TestUpstreamCallsOfferedFunctionsOnly(t *testing.T) {
	const fns = `"functions":[{"name":"weather_forecast","parameters":{"type":"object"}},{"name":"news","parameters":{"type":"object"}}]`
	tests := []struct {
		name, called, choice string
		finish               string
	}{
		{"offered", "weather_forecast", `"auto"`, "function_call"},
		{"forced and called", "weather_forecast", `{"name":"weather_forecast"}`, "function_call"},
		{"not offered", "delete_everything", `"auto"`, "error"},
		{"another than the forced one", "news", `{"name":"weather_forecast"}`, "error"},
		{"under none", "weather_forecast", `"none"`, "error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, _ := upstreamFixture(t, func(int) upstreamtest.Chat { return upstreamtest.Chat{Events: upCall(tc.called)} })
			tok := f.token(f.client(assistant.ScopeCorp), "ASSISTANT_API_CORP")
			for _, stream := range []bool{false, true} {
				body := `{"model":"m","stream":` + strconv.FormatBool(stream) +
					`,"messages":[{"role":"user","content":"hi"}],` + fns + `,"function_call":` + tc.choice + `}`
				resp, out := f.call("POST", "/api/v1/chat/completions", tok, body)
				if resp.StatusCode != 200 {
					t.Fatalf("stream %v: %d %s", stream, resp.StatusCode, out)
				}
				text, finish, called := answerCall(t, out, stream)
				wantCalled := ""
				if tc.finish == "function_call" {
					wantCalled = tc.called
				}
				if finish != tc.finish || called != wantCalled || text != "Checking." {
					t.Fatalf("stream %v: finish %q, call %q, text %q; want %q, %q, %q\n%s", stream, finish, called, text, tc.finish, wantCalled, "Checking.", out)
				}
			}
		})
	}
}

// callMessage is a message or a delta of a chat answer.
type callMessage struct {
	Content      string `json:"content"`
	FunctionCall *struct {
		Name string `json:"name"`
	} `json:"function_call"`
}

// answerCall reads a chat answer's text, finish_reason and called
// function, from a JSON answer or an event stream of one choice.
func answerCall(t *testing.T, body []byte, stream bool) (text, finish, called string) {
	t.Helper()
	payloads := []string{string(body)}
	if stream {
		payloads = nil
		for _, ev := range strings.Split(strings.TrimSpace(string(body)), "\n\n") {
			if p := strings.TrimPrefix(ev, "data: "); p != "[DONE]" {
				payloads = append(payloads, p)
			}
		}
	}
	for _, p := range payloads {
		var v struct {
			Choices []struct {
				Message      callMessage `json:"message"`
				Delta        callMessage `json:"delta"`
				FinishReason string      `json:"finish_reason"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(p), &v); err != nil || len(v.Choices) != 1 {
			t.Fatalf("%q: %v", p, err)
		}
		ch := v.Choices[0]
		text += ch.Message.Content + ch.Delta.Content
		for _, m := range []callMessage{ch.Message, ch.Delta} {
			if m.FunctionCall != nil {
				called = m.FunctionCall.Name
			}
		}
		if ch.FinishReason != "" {
			finish = ch.FinishReason
		}
	}
	return text, finish, called
}
