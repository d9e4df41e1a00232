package assistant_test

import (
	"cmp"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"partnerapi/internal/assistant"
	"partnerapi/internal/assistant/assistantsql"
	"partnerapi/internal/storetest"
)

// textEngine is an engine that only generates text, as the local engine
// does: it streams pieces and records the request it was given.
type textEngine struct {
	pieces []string
	call   *assistant.FunctionCall // returned parsed by nativeEngine
	got    *assistant.GenerateRequest
}

func (e textEngine) Models(context.Context) ([]assistant.ModelInfo, error) {
	return []assistant.ModelInfo{{Name: "qwen", Version: "1", Type: "chat", ContextWindow: 1000, SupportsFunctions: true}}, nil
}
func (e textEngine) CountTokens(context.Context, string, string) (int, error) { return 1, nil }
func (e textEngine) Generate(_ context.Context, req assistant.GenerateRequest, emit func(assistant.Delta) error) (assistant.Result, error) {
	*e.got = req
	for _, p := range e.pieces {
		if emit != nil {
			if err := emit(assistant.Delta{Text: p}); err != nil {
				return assistant.Result{}, err
			}
		}
	}
	ch := assistant.Choice{Text: strings.Join(e.pieces, ""), FinishReason: "stop"}
	if e.call != nil {
		ch.FunctionCall, ch.FinishReason = e.call, "function_call"
	}
	return assistant.Result{Choices: []assistant.Choice{ch}, Usage: assistant.Usage{PromptTokens: 5, CompletionTokens: len(e.pieces)}}, nil
}

type nativeEngine struct{ textEngine }

func (nativeEngine) NativeFunctionCalls(string) bool { return true }

var weather = []assistant.Function{
	{Name: "get_weather", Description: "Weather", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)},
	{Name: "get_time", Parameters: json.RawMessage(`{"type":"object"}`)},
}

func runChat(t *testing.T, eng assistant.Engine, req assistant.ChatRequest) (assistant.Result, string, error) {
	t.Helper()
	db := storetest.SQLite(t)
	if err := assistantsql.Migrate(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	svc := assistant.NewService(assistantsql.New(db), eng, assistant.Config{})
	creds, err := svc.CreateClient(context.Background(), assistant.ScopeCorp, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := assistant.Principal{ClientID: creds.ClientID, Scope: assistant.ScopeCorp}
	req.Model = "qwen"
	if req.Messages == nil {
		req.Messages = []assistant.Message{{Role: "user", Content: "Weather in Oslo?"}}
	}
	c, err := svc.PrepareChat(context.Background(), p, req)
	if err != nil {
		return assistant.Result{}, "", err
	}
	var streamed strings.Builder
	res, err := svc.Run(context.Background(), c, func(d assistant.Delta) error {
		streamed.WriteString(d.Text)
		return nil
	})
	return res, streamed.String(), err
}

func TestTextFunctionCalls(t *testing.T) {
	call := []string{"<tool", "_call>\n{\"name\": \"get_weather\", ", "\"arguments\": {\"city\": \"Oslo\"}}\n</tool_call>"}
	tests := []struct {
		name      string
		pieces    []string
		choice    assistant.FunctionChoice
		finish    string
		text      string // the choice's content
		streamed  string // what the client saw as content deltas
		fn, args  string
		functions []string // what the engine was shown
	}{
		{"call split across pieces", call, assistant.FunctionChoice{}, "function_call", "", "", "get_weather", `{"city":"Oslo"}`, []string{"get_weather", "get_time"}},
		{"text then call", append([]string{"Let me look. "}, call...), assistant.FunctionChoice{Mode: "auto"}, "function_call", "Let me look.", "Let me look. ", "get_weather", `{"city":"Oslo"}`, []string{"get_weather", "get_time"}},
		{"plain answer with a held-back tail", []string{"It is 3 degrees <", "tool"}, assistant.FunctionChoice{}, "stop", "It is 3 degrees <tool", "It is 3 degrees <tool", "", "", []string{"get_weather", "get_time"}},
		{"invalid JSON arguments", []string{"<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": Oslo}}</tool_call>"}, assistant.FunctionChoice{}, "error",
			"<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": Oslo}}</tool_call>", "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": Oslo}}</tool_call>", "", "", []string{"get_weather", "get_time"}},
		{"unknown function", []string{`<tool_call>{"name": "launch", "arguments": {}}</tool_call>`}, assistant.FunctionChoice{}, "error",
			`<tool_call>{"name": "launch", "arguments": {}}</tool_call>`, `<tool_call>{"name": "launch", "arguments": {}}</tool_call>`, "", "", []string{"get_weather", "get_time"}},
		{"llama-style bare JSON call", []string{" {\"name\": \"get_time\", ", "\"parameters\": {}}"}, assistant.FunctionChoice{}, "function_call", "", "", "get_time", `{}`, []string{"get_weather", "get_time"}},
		{"a reply opening with a brace is sent at the end", []string{"{Once}", " upon"}, assistant.FunctionChoice{}, "stop", "{Once} upon", "{Once} upon", "", "", []string{"get_weather", "get_time"}},
		{"none hides the functions and parses nothing", call, assistant.FunctionChoice{Mode: "none"}, "stop", strings.Join(call, ""), strings.Join(call, ""), "", "", nil},
		{"a named function is the only one shown", call, assistant.FunctionChoice{Mode: "name", Name: "get_weather"}, "function_call", "", "", "get_weather", `{"city":"Oslo"}`, []string{"get_weather"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got assistant.GenerateRequest
			res, streamed, err := runChat(t, textEngine{pieces: tt.pieces, got: &got}, assistant.ChatRequest{Functions: weather, FunctionCall: tt.choice})
			if err != nil {
				t.Fatal(err)
			}
			ch := res.Choices[0]
			if ch.FinishReason != tt.finish || ch.Text != tt.text || streamed != tt.streamed {
				t.Fatalf("finish %q text %q streamed %q", ch.FinishReason, ch.Text, streamed)
			}
			if tt.fn == "" {
				if ch.FunctionCall != nil || ch.FunctionsStateID != "" {
					t.Fatalf("unexpected call %+v %q", ch.FunctionCall, ch.FunctionsStateID)
				}
			} else if ch.FunctionCall == nil || ch.FunctionCall.Name != tt.fn || string(ch.FunctionCall.Arguments) != tt.args || !assistant.IsUUID(ch.FunctionsStateID) {
				t.Fatalf("call %+v state id %q", ch.FunctionCall, ch.FunctionsStateID)
			}
			var shown []string
			for _, f := range got.Functions {
				shown = append(shown, f.Name)
			}
			if strings.Join(shown, ",") != strings.Join(tt.functions, ",") {
				t.Fatalf("engine was shown %v, want %v", shown, tt.functions)
			}
		})
	}
}

// An engine that parses calls itself is trusted with the parsing: its text
// is not parsed, the functions and function_call reach it unchanged, and
// the service adds the functions_state_id. It refuses (finish_reason
// "error") a call whose arguments are not an object, or of a function
// function_call does not allow, as a text engine's parsed call is.
func TestNativeFunctionCalls(t *testing.T) {
	for _, mode := range []string{"", "auto", "none"} {
		var got assistant.GenerateRequest
		eng := nativeEngine{textEngine{pieces: []string{"<tool_call>"}, got: &got,
			call: &assistant.FunctionCall{Name: "get_time", Arguments: json.RawMessage(`{}`)}}}
		res, streamed, err := runChat(t, eng, assistant.ChatRequest{Functions: weather, FunctionCall: assistant.FunctionChoice{Mode: mode}})
		if err != nil {
			t.Fatal(err)
		}
		ch := res.Choices[0]
		if wantMode := cmp.Or(mode, "auto"); len(got.Functions) != 2 || got.FunctionCall.Mode != wantMode {
			t.Fatalf("mode %q: engine got %+v", mode, got)
		}
		if streamed != "<tool_call>" {
			t.Fatalf("mode %q: streamed %q", mode, streamed)
		}
		if mode == "none" {
			if ch.FinishReason != "error" || ch.FunctionCall != nil || ch.FunctionsStateID != "" {
				t.Fatalf("a call under none: %+v", ch)
			}
			continue
		}
		if ch.FinishReason != "function_call" || ch.FunctionCall.Name != "get_time" || !assistant.IsUUID(ch.FunctionsStateID) {
			t.Fatalf("mode %q: %+v", mode, ch)
		}
	}
	for _, call := range []assistant.FunctionCall{
		{Name: "get_time", Arguments: json.RawMessage(`[1]`)},
		{Name: "not_offered", Arguments: json.RawMessage(`{}`)},
	} {
		eng := nativeEngine{textEngine{pieces: []string{"<tool_call>"}, got: new(assistant.GenerateRequest), call: &call}}
		res, _, err := runChat(t, eng, assistant.ChatRequest{Functions: weather})
		if err != nil || res.Choices[0].FinishReason != "error" || res.Choices[0].FunctionCall != nil {
			t.Fatalf("call %s(%s): %+v %v", call.Name, call.Arguments, res.Choices[0], err)
		}
	}
}

func TestFunctionRequestValidation(t *testing.T) {
	tests := []struct {
		name string
		req  assistant.ChatRequest
		want string
	}{
		{"bad name", assistant.ChatRequest{Functions: []assistant.Function{{Name: "1x"}}}, "Invalid params: function name must be Latin letters, digits and underscores, not starting with a digit"},
		{"parameters not an object", assistant.ChatRequest{Functions: []assistant.Function{{Name: "f", Parameters: json.RawMessage(`"x"`)}}}, "Invalid params: functions[0].parameters must be a JSON Schema object"},
		{"named function not offered", assistant.ChatRequest{Functions: weather, FunctionCall: assistant.FunctionChoice{Mode: "name", Name: "nope"}}, "Invalid params: function_call.name must name one of the functions"},
		{"unknown mode", assistant.ChatRequest{Functions: weather, FunctionCall: assistant.FunctionChoice{Mode: "always"}}, `Invalid params: function_call must be "auto", "none" or {"name": ...}`},
		{"call without a result", assistant.ChatRequest{Functions: weather, Messages: []assistant.Message{
			{Role: "user", Content: "Weather in Oslo?"},
			{Role: "assistant", FunctionCall: &assistant.FunctionCall{Name: "get_weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)}},
		}}, "Invalid params: every assistant function call must have a result in history"},
		{"second call before the first's result", assistant.ChatRequest{Functions: weather, Messages: []assistant.Message{
			{Role: "user", Content: "Weather in Oslo?"},
			{Role: "assistant", FunctionCall: &assistant.FunctionCall{Name: "get_weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)}},
			{Role: "assistant", FunctionCall: &assistant.FunctionCall{Name: "get_weather", Arguments: json.RawMessage(`{"city":"Bergen"}`)}},
			{Role: "function", Content: `{"t":3}`},
		}}, "Invalid params: every assistant function call must have a result in history"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got assistant.GenerateRequest
			_, _, err := runChat(t, textEngine{got: &got}, tt.req)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
		})
	}
}

// TestFunctionResultDoubleEncoded: langchain-gigachat sends a tool's result
// JSON.stringify()d once more; the engine gets the object the reference
// describes, while plain strings and objects pass as sent. Only JSON's own
// white space may surround the object: a string with U+00A0 or another
// Unicode space next to its braces is not a serialised object.
func TestFunctionResultDoubleEncoded(t *testing.T) {
	tests := []struct{ sent, want string }{
		{`"{\"temperature\":3}"`, `{"temperature":3}`},
		{`{"temperature":3}`, `{"temperature":3}`},
		{`"sunny"`, `"sunny"`},
		{`"{not json"`, `"{not json"`},
		{`not json at all`, `not json at all`},
		// JSON white space around the object is still the object.
		{`" {\"temperature\":3}\n"`, " {\"temperature\":3}\n"},
		// Other Unicode spaces are not JSON white space: a string with
		// one before or after the braces holds no JSON object, so it is
		// a plain string and must reach the engine as sent.
		{`"\u00a0{\"temperature\":3}"`, `"\u00a0{\"temperature\":3}"`},
		{"\"\u00a0{\\\"temperature\\\":3}\"", "\"\u00a0{\\\"temperature\\\":3}\""},
		{`"{\"temperature\":3}\u2003"`, `"{\"temperature\":3}\u2003"`},
		{`"\u3000{\"temperature\":3}\u0085"`, `"\u3000{\"temperature\":3}\u0085"`},
	}
	for _, tt := range tests {
		msgs := []assistant.Message{
			{Role: "user", Content: "Weather in Oslo?"},
			{Role: "assistant", FunctionCall: &assistant.FunctionCall{Name: "get_weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)}},
			{Role: "function", Content: tt.sent},
		}
		var got assistant.GenerateRequest
		if _, _, err := runChat(t, textEngine{pieces: []string{"Cold."}, got: &got}, assistant.ChatRequest{Functions: weather, Messages: msgs}); err != nil {
			t.Fatal(err)
		}
		if c := got.Messages[2].Content; c != tt.want || msgs[2].Content != tt.sent {
			t.Errorf("function result %s reached the engine as %s (want %s); the request now says %s", tt.sent, c, tt.want, msgs[2].Content)
		}
	}
}
