package chattemplate

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
)

// The Hermes tool-call format, which Qwen2.5, Hermes and many fine-tunes
// were trained on: the model answers a call as
//
//	<tool_call>
//	{"name": "get_weather", "arguments": {"city": "Oslo"}}
//	</tool_call>
const (
	ToolCallOpen  = "<tool_call>"
	ToolCallClose = "</tool_call>"
)

// ErrToolCallArguments is a tool-call block whose JSON is not an object
// with a name and object arguments.
var ErrToolCallArguments = errors.New("tool call is not {\"name\": ..., \"arguments\": {...}}")

// ParsedToolCall is the outcome of reading a model's reply for a call.
type ParsedToolCall struct {
	Found bool // the reply contains a <tool_call> block
	// Content is the text before the block, trimmed.
	Content   string
	Name      string
	Arguments json.RawMessage // a compact JSON object
	// Err is set when the block was found but its JSON is unusable
	// (truncated, not an object, no name); Name and Arguments are then empty.
	Err error
}

// ParseToolCall reads the first <tool_call> block of a reply. A block
// without its closing tag is still read, because generation may stop at
// the end-of-turn token before the model writes it. Only the first call is
// returned: the assistant API carries one function_call per message.
//
// The Llama 3.1 format, a reply that is nothing but a JSON object
// {"name": ..., "parameters": {...}}, is read too: a reply starting with "{"
// that has a "name" key is taken as a call.
func ParseToolCall(reply string) ParsedToolCall {
	i := strings.Index(reply, ToolCallOpen)
	if i < 0 {
		if body := strings.TrimSpace(reply); StartsBareCall(body) && strings.Contains(body, `"name"`) {
			return parseCallBody(ParsedToolCall{Found: true}, body)
		}
		return ParsedToolCall{Content: reply}
	}
	p := ParsedToolCall{Found: true, Content: strings.TrimSpace(reply[:i])}
	body := reply[i+len(ToolCallOpen):]
	if v, ok := closedJSONValue(body); ok {
		body = v
	} else if j := strings.Index(body, ToolCallClose); j >= 0 {
		body = body[:j]
	}
	return parseCallBody(p, body)
}

// closedJSONValue is the JSON value a block's body begins with when only
// space, the closing tag or nothing follows it. The value is cut out by
// the JSON syntax rather than at the first closing tag, because that tag
// may sit inside one of the arguments' strings (a call that passes
// markup), where cutting would leave the JSON unterminated and the call
// unusable.
func closedJSONValue(body string) (string, bool) {
	dec := json.NewDecoder(strings.NewReader(body))
	var v json.RawMessage
	if dec.Decode(&v) != nil {
		return "", false
	}
	rest := strings.TrimSpace(body[dec.InputOffset():])
	if rest != "" && !strings.HasPrefix(rest, ToolCallClose) {
		return "", false
	}
	return string(v), true
}

// StartsBareCall reports whether a reply's text (leading space trimmed)
// may be a Llama-3.1-style bare JSON call, which is held back while it
// streams.
func StartsBareCall(trimmed string) bool { return strings.HasPrefix(trimmed, "{") }

func parseCallBody(p ParsedToolCall, body string) ParsedToolCall {
	var call struct {
		Name       string          `json:"name"`
		Arguments  json.RawMessage `json:"arguments"`
		Parameters json.RawMessage `json:"parameters"` // Llama 3.1 spells it so
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(body)), &call); err != nil {
		p.Err = errors.Join(ErrToolCallArguments, err)
		return p
	}
	args := call.Arguments
	if len(args) == 0 {
		args = call.Parameters
	}
	// Some models write the arguments as a JSON string holding the object,
	// as the OpenAI wire format does.
	var s string
	if json.Unmarshal(args, &s) == nil {
		args = json.RawMessage(s)
	}
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	var obj map[string]json.RawMessage
	if call.Name == "" || json.Unmarshal(args, &obj) != nil || obj == nil {
		p.Err = ErrToolCallArguments
		return p
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, args); err != nil {
		p.Err = errors.Join(ErrToolCallArguments, err)
		return p
	}
	p.Name, p.Arguments = call.Name, compact.Bytes()
	return p
}

// rendersTools reports whether a template has its own tools section; one
// that does not (the built-in formats, Llama 2, Phi-3, plain text) gets the
// tools in a system message in the Hermes format instead, so a model whose
// manifest says it supports functions always sees them.
func (t *Template) rendersTools() bool {
	return t.jinja != nil && strings.Contains(t.source, "tools")
}

// toolsPreamble is the Hermes-format system text listing the tools, worded
// as Qwen2.5's own template words it.
func toolsPreamble(tools []Tool) string {
	var b strings.Builder
	b.WriteString("# Tools\n\nYou may call one or more functions to assist with the user query.\n\n")
	b.WriteString("You are provided with function signatures within <tools></tools> XML tags:\n<tools>")
	for _, tool := range tools {
		type fn struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters,omitempty"`
		}
		entry := struct {
			Type     string `json:"type"`
			Function fn     `json:"function"`
		}{"function", fn{tool.Name, tool.Description, validJSON(tool.Parameters)}}
		line, _ := json.Marshal(entry)
		b.WriteString("\n")
		b.Write(line)
	}
	b.WriteString("\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n")
	b.WriteString("<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call>")
	return b.String()
}

func validJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || !json.Valid(raw) {
		return nil
	}
	return raw
}

// withToolsInText rewrites a conversation for a template without a tools
// section: the tools go into the system message (merged with the caller's,
// or a new first message), earlier calls become <tool_call> text of their
// assistant message and function results become user messages wrapped in
// <tool_response>, which is how the Hermes format spells them.
func withToolsInText(msgs []Message, tools []Tool) []Message {
	out := make([]Message, 0, len(msgs)+1)
	preamble := toolsPreamble(tools)
	if len(msgs) > 0 && msgs[0].Role == "system" {
		sys := msgs[0]
		sys.Content = strings.TrimSpace(sys.Content) + "\n\n" + preamble
		out = append(out, sys)
		msgs = msgs[1:]
	} else {
		out = append(out, Message{Role: "system", Content: preamble})
	}
	for _, m := range msgs {
		switch {
		case m.ToolCall != nil:
			args := validJSON(m.ToolCall.Arguments)
			if args == nil {
				args = json.RawMessage(`{}`)
			}
			name, _ := json.Marshal(m.ToolCall.Name)
			call := ToolCallOpen + "\n{\"name\": " + string(name) + ", \"arguments\": " + string(args) + "}\n" + ToolCallClose
			if c := strings.TrimSpace(m.Content); c != "" {
				call = c + "\n" + call
			}
			m.Content, m.ToolCall = call, nil
		case m.Role == "tool" || m.Role == "function":
			m.Role, m.Content = "user", "<tool_response>\n"+m.Content+"\n</tool_response>"
		}
		out = append(out, m)
	}
	return out
}
