package chattemplate

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseToolCall holds ParseToolCall's contract on any reply, since
// every chat reply of a model with functions goes through it and its
// result becomes the API's function_call: a reply without a call is its
// content unchanged; a call read without error has a name and arguments
// that are one compact JSON object; a call that is unusable has neither;
// content before a call is trimmed. It also holds the round trip with the
// history a template without a tools section shows the model
// (withToolsInText): an earlier assistant call of a valid UTF-8 name and a
// JSON object of arguments, after text without a tag of its own, is read
// back from that message as the same call, so the model sees the calls
// the client sent it in the form it is asked to answer in.
func FuzzParseToolCall(f *testing.F) {
	for _, reply := range []string{
		"It is sunny.",
		"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\", \"days\": 2}}\n</tool_call>",
		"Let me check.\n<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>",
		"<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": [1, 2]}}",
		`<tool_call>{"name":"f","arguments":"{\"a\": 1}"}</tool_call>`,
		`<tool_call>{"name":"f","parameters":{"a":1}}</tool_call>`,
		"{\"name\": \"f\", \"parameters\": {\"a\": 1}}",
		"{\"name\": \"f\", \"parameters\": {",
		"{curly} story",
		`<tool_call>{"name":"f","arguments":[1]}</tool_call>`,
	} {
		f.Add(reply, "Let me check.", "get_weather", []byte(`{"city": "Oslo", "days": [1, 2]}`))
	}
	f.Add("", "", "f", []byte(`{"q":"</tool_call>"}`))
	f.Fuzz(func(t *testing.T, reply, content, name string, args []byte) {
		checkParsed(t, reply, ParseToolCall(reply))

		var obj map[string]json.RawMessage
		if name == "" || !utf8.ValidString(name) || strings.Contains(content, ToolCallOpen) ||
			json.Unmarshal(args, &obj) != nil || obj == nil {
			return
		}
		var want bytes.Buffer
		if err := json.Compact(&want, args); err != nil {
			t.Fatalf("arguments %q decode but do not compact: %v", args, err)
		}
		msgs := withToolsInText([]Message{{Role: "assistant", Content: content, ToolCall: &ToolCall{Name: name, Arguments: args}}}, nil)
		shown := msgs[len(msgs)-1].Content
		p := ParseToolCall(shown)
		if !p.Found || p.Err != nil || p.Name != name || !bytes.Equal(p.Arguments, want.Bytes()) || p.Content != strings.TrimSpace(content) {
			t.Fatalf("call %q %s after %q shown as %q reads back as %+v (arguments %s)", name, args, content, shown, p, p.Arguments)
		}
	})
}

func checkParsed(t *testing.T, reply string, p ParsedToolCall) {
	t.Helper()
	switch {
	case !p.Found:
		if p.Content != reply || p.Name != "" || p.Arguments != nil || p.Err != nil {
			t.Fatalf("no call in %q, but %+v", reply, p)
		}
	case p.Err != nil:
		if !errors.Is(p.Err, ErrToolCallArguments) || p.Name != "" || p.Arguments != nil {
			t.Fatalf("unusable call in %q, but %+v", reply, p)
		}
	default:
		var obj map[string]json.RawMessage
		var compact bytes.Buffer
		if p.Name == "" || json.Unmarshal(p.Arguments, &obj) != nil || obj == nil ||
			json.Compact(&compact, p.Arguments) != nil || !bytes.Equal(compact.Bytes(), p.Arguments) {
			t.Fatalf("call in %q read as %q %s", reply, p.Name, p.Arguments)
		}
	}
	if p.Content != reply && p.Content != strings.TrimSpace(p.Content) {
		t.Fatalf("content %q of %q is not trimmed", p.Content, reply)
	}
}
