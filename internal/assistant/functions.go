package assistant

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"partnerapi/internal/inference/chattemplate"
)

// checkFunctions validates a request's functions and its function_call
// against them, filling in the default mode "auto".
func checkFunctions(fns []Function, choice *FunctionChoice) error {
	for i, f := range fns {
		if !functionName.MatchString(f.Name) {
			return invalid("function name must be Latin letters, digits and underscores, not starting with a digit")
		}
		if p := bytes.TrimSpace(f.Parameters); len(p) > 0 && string(p) != "null" && p[0] != '{' {
			return invalid(fmt.Sprintf("functions[%d].parameters must be a JSON Schema object", i))
		}
	}
	switch choice.Mode {
	case "":
		choice.Mode = FunctionCallAuto
	case FunctionCallAuto, FunctionCallNone:
	case FunctionCallName:
		for _, f := range fns {
			if f.Name == choice.Name {
				return nil
			}
		}
		return invalid("function_call.name must name one of the functions")
	default:
		return invalid(`function_call must be "auto", "none" or {"name": ...}`)
	}
	return nil
}

// nativeFunctionCalls reports whether the engine serving model returns
// parsed function calls itself.
func (s *Service) nativeFunctionCalls(model string) bool {
	n, ok := s.engine.(NativeFunctionCaller)
	return ok && n.NativeFunctionCalls(model)
}

// textCalls is how the service runs function calling for an engine that
// only generates text: it narrows the functions the template shows to what
// function_call allows, holds back streamed text from the first <tool_call>
// on, and parses the finished replies.
type textCalls struct {
	offered map[string]bool
	filters map[int]*callFilter
	emit    func(Delta) error
}

// prepareTextCalls narrows req for a text-only engine; it returns nil when
// the reply needs no parsing (no functions, or function_call "none", in
// which case the model is not shown the functions at all).
func prepareTextCalls(req *GenerateRequest, emit func(Delta) error) *textCalls {
	if len(req.Functions) == 0 {
		return nil
	}
	switch req.FunctionCall.Mode {
	case FunctionCallNone:
		req.Functions = nil
		return nil
	case FunctionCallName:
		// A text-only engine cannot be forced to call; showing it only the
		// requested function is the closest honest equivalent.
		for _, f := range req.Functions {
			if f.Name == req.FunctionCall.Name {
				req.Functions = []Function{f}
				break
			}
		}
	}
	tc := &textCalls{offered: map[string]bool{}, filters: map[int]*callFilter{}, emit: emit}
	for _, f := range req.Functions {
		tc.offered[f.Name] = true
	}
	return tc
}

// wrap returns the emit the engine gets: text up to a <tool_call> block
// goes out, the block is held back (rule 9: the call goes out whole).
func (tc *textCalls) wrap() func(Delta) error {
	if tc.emit == nil {
		return nil
	}
	return func(d Delta) error {
		f := tc.filters[d.Index]
		if f == nil {
			f = &callFilter{}
			tc.filters[d.Index] = f
		}
		if out := f.push(d.Text); out != "" {
			return tc.emit(Delta{Index: d.Index, Text: out})
		}
		return nil
	}
}

// finish parses every choice's reply: a valid call of an offered function
// becomes FunctionCall with finish_reason "function_call"; a call block that
// cannot be used (bad JSON, unknown function) ends with finish_reason
// "error" and its text, which is then also streamed so that a stream says
// what the JSON answer says.
func (tc *textCalls) finish(res *Result) error {
	for i := range res.Choices {
		ch := &res.Choices[i]
		p := chattemplate.ParseToolCall(ch.Text)
		rest := ""
		if f := tc.filters[ch.Index]; f != nil {
			rest = f.rest()
		}
		switch {
		case !p.Found:
			// Text held back because it could have begun a call.
		case p.Err == nil && tc.offered[p.Name]:
			ch.Text = p.Content
			ch.FunctionCall = &FunctionCall{Name: p.Name, Arguments: p.Arguments}
			ch.FinishReason = "function_call"
			rest = ""
		default:
			ch.FinishReason = "error"
		}
		if rest != "" && tc.emit != nil {
			if err := tc.emit(Delta{Index: ch.Index, Text: rest}); err != nil {
				return err
			}
		}
	}
	return nil
}

// callFilter splits one choice's streamed text at the first <tool_call>;
// a reply that opens with "{" (a Llama-3.1-style bare JSON call) is held
// back whole.
type callFilter struct {
	held    string // a tail that may be the start of the opening tag
	started bool   // a non-space character has been seen
	inCall  bool
	call    strings.Builder // everything from the opening tag on
}

// push takes the next piece of text and returns what can be sent now.
func (f *callFilter) push(s string) string {
	if f.inCall {
		f.call.WriteString(s)
		return ""
	}
	buf := f.held + s
	if !f.started {
		trimmed := strings.TrimLeft(buf, " \t\r\n")
		if trimmed == "" {
			f.held = buf
			return ""
		}
		f.started = true
		if chattemplate.StartsBareCall(trimmed) {
			f.inCall, f.held = true, ""
			f.call.WriteString(buf)
			return ""
		}
	}
	if i := strings.Index(buf, chattemplate.ToolCallOpen); i >= 0 {
		f.inCall, f.held = true, ""
		f.call.WriteString(buf[i:])
		return buf[:i]
	}
	k := partialTagSuffix(buf, chattemplate.ToolCallOpen)
	f.held = buf[len(buf)-k:]
	return buf[:len(buf)-k]
}

// rest is the text not sent yet.
func (f *callFilter) rest() string { return f.held + f.call.String() }

// partialTagSuffix is the length of the longest suffix of s that is a proper
// prefix of tag.
func partialTagSuffix(s, tag string) int {
	for k := min(len(s), len(tag)-1); k > 0; k-- {
		if strings.HasSuffix(s, tag[:k]) {
			return k
		}
	}
	return 0
}

// callable reports whether a reply may call the function name: one of
// req's functions that function_call allows (none under "none", only the
// one it names under {"name": ...}). A text-only engine's calls are held
// to this when they are parsed (textCalls.finish); an engine that returns
// parsed calls (an upstream) is held to it in Run, since a server may
// ignore tool_choice or call a tool it was never offered, and a client
// runs a function_call finish as a call of one of its functions.
func callable(req GenerateRequest, name string) bool {
	switch req.FunctionCall.Mode {
	case FunctionCallNone:
		return false
	case FunctionCallName:
		if name != req.FunctionCall.Name {
			return false
		}
	}
	for _, f := range req.Functions {
		if f.Name == name {
			return true
		}
	}
	return false
}

// validArguments reports whether raw is a JSON object.
func validArguments(raw json.RawMessage) bool {
	var obj map[string]json.RawMessage
	return json.Unmarshal(raw, &obj) == nil && obj != nil
}

// unwrapFunctionResults returns msgs with every role "function" result that
// is a JSON object serialised twice decoded once. The reference wants the
// result as a JSON object serialised as a string, but langchain-gigachat
// JSON.stringify()s a ToolMessage's content, which LangChain tools have
// already serialised: `"{\"temperature\":3}"` would otherwise reach the
// model as an escaped string instead of the object. A result that is a
// plain JSON string ("sunny") is left as sent. msgs itself is not changed.
//
// The inner string counts as an object only when it is valid JSON whose
// first byte past JSON's own white space (RFC 8259 §2: space, tab, LF, CR)
// is '{'. strings.TrimSpace would also skip U+00A0, U+3000 and the other
// Unicode spaces, which json.Valid refuses: "\u00a0{...}" would pass the
// check on its trimmed form and reach the model stripped of its quotes,
// though it holds no object and is the tool's plain string.
func unwrapFunctionResults(msgs []Message) []Message {
	var out []Message
	for i, m := range msgs {
		if m.Role != "function" {
			continue
		}
		var inner string
		if json.Unmarshal([]byte(m.Content), &inner) != nil {
			continue
		}
		if t := strings.TrimLeft(inner, " \t\n\r"); !strings.HasPrefix(t, "{") || !json.Valid([]byte(inner)) {
			continue
		}
		if out == nil {
			out = append([]Message(nil), msgs...)
		}
		out[i].Content = inner
	}
	if out == nil {
		return msgs
	}
	return out
}

// callsAnswered reports whether every function call an assistant message
// of the history carries is followed by its result, a role "function"
// message, before the next call: the provider refuses a history with a
// call left unanswered (assistant-grpc.md §4, "every assistant function
// call must have a result in history"), since the model would otherwise be
// asked to go on from a call whose outcome it is never told. A result with
// no call before it is not refused; the provider says nothing of it.
func callsAnswered(msgs []Message) bool {
	pending := false
	for _, m := range msgs {
		switch {
		case m.Role == "assistant" && m.FunctionCall != nil:
			if pending {
				return false
			}
			pending = true
		case m.Role == "function":
			pending = false
		}
	}
	return !pending
}
