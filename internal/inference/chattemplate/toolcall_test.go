package chattemplate

import (
	"errors"
	"strings"
	"testing"
)

func TestParseToolCall(t *testing.T) {
	tests := []struct {
		name    string
		reply   string
		found   bool
		content string
		fn      string
		args    string
		bad     bool
	}{
		{"plain text", "It is sunny.", false, "It is sunny.", "", "", false},
		{"qwen call", "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\", \"days\": 2}}\n</tool_call>", true, "", "get_weather", `{"city":"Oslo","days":2}`, false},
		{"text before the call", "Let me check.\n<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>", true, "Let me check.", "f", `{}`, false},
		{"no closing tag (stopped at end of turn)", "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": [1, 2]}}", true, "", "f", `{"a":[1,2]}`, false},
		{"arguments as a JSON string", `<tool_call>{"name":"f","arguments":"{\"a\": 1}"}</tool_call>`, true, "", "f", `{"a":1}`, false},
		{"llama-style parameters", `<tool_call>{"name":"f","parameters":{"a":1}}</tool_call>`, true, "", "f", `{"a":1}`, false},
		{"missing arguments mean none", `<tool_call>{"name":"f"}</tool_call>`, true, "", "f", `{}`, false},
		{"only the first of two calls", "<tool_call>{\"name\":\"a\",\"arguments\":{}}</tool_call>\n<tool_call>{\"name\":\"b\",\"arguments\":{}}</tool_call>", true, "", "a", `{}`, false},
		{"llama 3.1 bare JSON", "{\"name\": \"f\", \"parameters\": {\"a\": 1}}", true, "", "f", `{"a":1}`, false},
		{"bare JSON truncated", "{\"name\": \"f\", \"parameters\": {", true, "", "", "", true},
		{"a reply in braces without a name is text", "{curly} story", false, "{curly} story", "", "", false},
		{"truncated JSON", "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"city\": \"Os", true, "", "", "", true},
		{"arguments not an object", `<tool_call>{"name":"f","arguments":[1]}</tool_call>`, true, "", "", "", true},
		{"no name", `<tool_call>{"arguments":{}}</tool_call>`, true, "", "", "", true},
		{"closing tag inside an argument", "<tool_call>{\"name\":\"f\",\"arguments\":{\"html\":\"<b></tool_call>\"}}</tool_call>", true, "", "f", `{"html":"<b></tool_call>"}`, false},
		{"text after the JSON before the tag", `<tool_call>{"name":"f","arguments":{}} and more</tool_call>`, true, "", "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := ParseToolCall(tt.reply)
			if p.Found != tt.found || p.Content != tt.content || p.Name != tt.fn || string(p.Arguments) != tt.args {
				t.Fatalf("got %+v (args %s)", p, p.Arguments)
			}
			if (p.Err != nil) != tt.bad || (tt.bad && !errors.Is(p.Err, ErrToolCallArguments)) {
				t.Fatalf("err %v, want bad=%v", p.Err, tt.bad)
			}
		})
	}
}

// A template without a tools section (here the built-in ChatML format)
// still shows the model its tools, its earlier calls and their results, in
// the Hermes format that ParseToolCall reads back.
func TestToolsWithoutToolsSection(t *testing.T) {
	tpl, err := Parse(chatML)
	if err != nil {
		t.Fatal(err)
	}
	msgs := []Message{
		{Role: "system", Content: "Be brief."},
		{Role: "user", Content: "Weather in Oslo?"},
		{Role: "assistant", ToolCall: &ToolCall{Name: "get_weather", Arguments: []byte(`{"city":"Oslo"}`)}},
		{Role: "tool", Content: `{"temp":3}`},
	}
	tools := []Tool{{Name: "get_weather", Description: "Current weather", Parameters: []byte(`{"type":"object","properties":{"city":{"type":"string"}}}`)}}
	got, err := tpl.Render(msgs, Options{AddGenerationPrompt: true, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	want := "<|im_start|>system\nBe brief.\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n" +
		"You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n" +
		`{"type":"function","function":{"name":"get_weather","description":"Current weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}` +
		"\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n" +
		"<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n" +
		"<|im_start|>user\nWeather in Oslo?<|im_end|>\n" +
		"<|im_start|>assistant\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\":\"Oslo\"}}\n</tool_call><|im_end|>\n" +
		"<|im_start|>user\n<tool_response>\n{\"temp\":3}\n</tool_response><|im_end|>\n" +
		"<|im_start|>assistant\n"
	if got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	// Without a system message the tools become the first message; the
	// caller's slice is not modified.
	got, err = tpl.Render(msgs[1:2], Options{Tools: tools})
	if err != nil || !strings.HasPrefix(got, "<|im_start|>system\n# Tools\n") {
		t.Fatalf("got %q %v", got, err)
	}
	if msgs[2].ToolCall == nil || msgs[3].Role != "tool" {
		t.Fatal("Render modified the caller's messages")
	}
	// Without tools the conversation renders unchanged.
	plain, err := tpl.Render(msgs[:2], Options{})
	if err != nil || strings.Contains(plain, "# Tools") {
		t.Fatalf("no tools: %q %v", plain, err)
	}
}

// The Qwen2.5 template's own tools section is used, not the fallback.
func TestOwnToolsSectionWins(t *testing.T) {
	tpl, err := Parse(`{% if tools %}TOOLS:{{ tools | length }}{% endif %}{% for m in messages %}[{{ m.role }}]{% endfor %}`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := tpl.Render([]Message{{Role: "user", Content: "x"}}, Options{Tools: []Tool{{Name: "f"}}})
	if err != nil || got != "TOOLS:1[user]" {
		t.Fatalf("got %q %v", got, err)
	}
}

// A template that drops the system message (Phi-3's) still shows the model
// the functions: their description, which goes in a system message, opens
// the first user turn instead.
func TestToolsReachTemplatesThatDropSystem(t *testing.T) {
	tpl, err := Parse(`{% for m in messages %}{% if m.role == 'user' %}<|user|>{{ m.content }}<|end|>{% endif %}{% endfor %}<|assistant|>`)
	if err != nil {
		t.Fatal(err)
	}
	tools := []Tool{{Name: "get_weather", Description: "Current weather"}}
	got, err := tpl.Render([]Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Weather in Oslo?"}}, Options{Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got, "<|user|>Be brief.\n\n# Tools\n") || !strings.Contains(got, `"name":"get_weather"`) ||
		!strings.HasSuffix(got, "</tool_call>\n\nWeather in Oslo?<|end|><|assistant|>") {
		t.Errorf("got %q", got)
	}
}
