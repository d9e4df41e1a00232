// Package chattemplate renders chat messages into a model's prompt text with
// the Jinja template a GGUF file carries in tokenizer.chat_template (rendered
// by gonja, a pure-Go Jinja implementation), or with a plain-text fallback
// for models without one.
package chattemplate

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nikolalohinski/gonja/v2/exec"
)

// Message is one chat message as the template sees it.
type Message struct {
	Role    string // system | user | assistant | function | tool
	Content string
	Name    string // function name for role "function", optional otherwise
	// ToolCall is a function call the assistant made in this message.
	ToolCall *ToolCall
}

// ToolCall is a function call; Arguments is a JSON object.
type ToolCall struct {
	Name      string
	Arguments json.RawMessage
}

// Tool is a function offered to the model; templates that support tools
// (Qwen2.5, Llama 3.1, Hermes…) list them from the "tools" variable.
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage // JSON Schema object; may be empty
}

// Options are the variables templates expect besides the messages.
type Options struct {
	Tools               []Tool
	BOSToken            string // e.g. "<s>"
	EOSToken            string
	AddGenerationPrompt bool // end with the header that starts the assistant's turn
	// ControlTokens are the spellings the caller's tokenizer parses as
	// control tokens. Render does not use them; RenderPieces keeps every
	// JSON object key that holds one request text (usertext.go).
	ControlTokens []string
}

// Template renders a conversation to prompt text. Safe for concurrent use.
type Template struct {
	source string
	jinja  *exec.Template // nil for the plain-text fallback
	// fallback renders when jinja fails for a reason other than the
	// template's raise_exception (ForModel); nil: such failures are errors.
	fallback *Template
	warned   atomic.Bool // the fallback's warning was logged

	systemOnce  sync.Once
	dropsSystem bool // DropsSystem's answer, found once
}

// ErrTemplate wraps template parse and render failures, including the
// template's own raise_exception calls (for example on role alternation).
var ErrTemplate = errors.New("chat template")

// RaisedError is a template's own refusal of a conversation through
// raise_exception (for example roles that must alternate); Message is the
// template's text, which names what is wrong with the messages. It is an
// ErrTemplate.
type RaisedError struct{ Message string }

func (e *RaisedError) Error() string { return "chat template: template raised: " + e.Message }

// Is makes a raised error an ErrTemplate for errors.Is.
func (e *RaisedError) Is(target error) bool { return target == ErrTemplate }

// Parse compiles a Jinja chat template.
// Templates come from model files, so a panic inside the Jinja library is
// turned into an error rather than taking the server down.
func Parse(source string) (t *Template, err error) {
	defer func() {
		if r := recover(); r != nil {
			t, err = nil, fmt.Errorf("%w: parser panic: %v", ErrTemplate, r)
		}
	}()
	tpl, err := exec.NewTemplate(rootName, jinjaConfig(), sourceLoader(source), environment)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTemplate, err)
	}
	fixNegativeIndexes(tpl.Root())
	return &Template{source: source, jinja: tpl}, nil
}

// PlainText is the fallback for models without a chat template, chosen for
// completion models such as stories260K: the message contents, trimmed, in
// order, separated by a blank line, without role labels and without a
// trailing newline. A completion model then simply continues the last
// message's text ("Once upon a time" → ", there was a little girl…"), which
// is the most sensible reply such a model can give; role labels would make it
// imitate a dialogue format it never saw.
func PlainText() *Template { return &Template{} }

// IsPlainText reports whether t is the fallback format.
func (t *Template) IsPlainText() bool { return t.jinja == nil }

// Source is the Jinja source ("" for the fallback).
func (t *Template) Source() string { return t.source }

// systemProbe is the system message DropsSystem renders: words no template
// writes of its own, in lower case, so that a template that re-cases the
// text still shows it.
const systemProbe = "reply in the manner of the probe quokka"

// DropsSystem reports whether the template leaves a leading system message
// out of the prompt without refusing it: Phi-3's own template writes only
// the user and assistant turns. The caller should then fold the system
// message into the first user message, as for templates that refuse one,
// since the client's instructions would otherwise be lost without a word.
// It is found once per template, by rendering a system message and a user
// message; a template that refuses that conversation does not drop the
// system message (its refusal is the caller's to handle).
func (t *Template) DropsSystem() bool {
	t.systemOnce.Do(func() {
		if t.jinja == nil {
			return // the plain-text format writes every content
		}
		out, err := t.Render([]Message{{Role: "system", Content: systemProbe}, {Role: "user", Content: "Hello."}},
			Options{BOSToken: "<s>", EOSToken: "</s>", AddGenerationPrompt: true})
		t.dropsSystem = err == nil && !strings.Contains(strings.ToLower(out), systemProbe)
	})
	return t.dropsSystem
}

// FoldSystem is msgs with a leading system message folded into the first
// user message (its text, a blank line, the user's), or turned into a user
// message when no user message follows; ok is false without a system
// message. It serves templates that refuse a system message (Mistral v0.1
// and v0.2, whose documentation suggests this) or drop it (DropsSystem).
func FoldSystem(msgs []Message) (folded []Message, ok bool) {
	if len(msgs) == 0 || msgs[0].Role != "system" {
		return nil, false
	}
	sys, rest := msgs[0], msgs[1:]
	folded = slices.Clone(rest)
	for i, m := range folded {
		if m.Role == "user" {
			folded[i].Content = sys.Content + "\n\n" + m.Content
			return folded, true
		}
	}
	return append([]Message{{Role: "user", Content: sys.Content}}, rest...), true
}

// Render renders msgs.
func (t *Template) Render(msgs []Message, opts Options) (out string, err error) {
	origMsgs, origOpts := msgs, opts
	defer func() {
		if r := recover(); r != nil {
			out, err = "", fmt.Errorf("%w: render panic: %v", ErrTemplate, r)
		}
		var raised *RaisedError
		if err != nil && t.fallback != nil && !errors.As(err, &raised) {
			if !t.warned.Swap(true) {
				slog.Warn("chat template: the model's template failed to render; using the built-in format its markers identify", "error", err)
			}
			out, err = t.fallback.Render(origMsgs, origOpts)
		}
	}()
	if len(opts.Tools) > 0 && !t.rendersTools() {
		msgs, opts.Tools = withToolsInText(msgs, opts.Tools), nil
		// The functions are described in a system message, which a
		// template that drops it would lose: the model would never learn
		// of them.
		if folded, ok := FoldSystem(msgs); ok && t.DropsSystem() {
			msgs = folded
		}
	}
	if t.jinja == nil {
		parts := make([]string, 0, len(msgs))
		for _, m := range msgs {
			if c := strings.TrimSpace(m.Content); c != "" {
				parts = append(parts, c)
			}
		}
		return strings.Join(parts, "\n\n"), nil
	}
	// The dictionaries are built in the order Hugging Face's callers build
	// them, which tojson keeps.
	var order orderRecorder
	defer order.release()
	list := make([]map[string]any, len(msgs))
	for i, m := range msgs {
		kv := []any{"role", m.Role, "content", m.Content}
		if m.Name != "" {
			kv = append(kv, "name", m.Name)
		}
		if m.ToolCall != nil {
			// The OpenAI shape templates are written against.
			kv = append(kv, "tool_calls", []any{order.object("type", "function", "function", order.object(
				"name", m.ToolCall.Name, "arguments", order.decode(m.ToolCall.Arguments)))})
		}
		list[i] = order.object(kv...)
	}
	vars := map[string]any{}
	if len(opts.Tools) > 0 {
		tools := make([]any, len(opts.Tools))
		for i, tool := range opts.Tools {
			kv := []any{"name", tool.Name, "description", tool.Description}
			if len(tool.Parameters) > 0 {
				kv = append(kv, "parameters", order.decode(tool.Parameters))
			}
			tools[i] = order.object("type", "function", "function", order.object(kv...))
		}
		vars["tools"] = tools
	}
	// The Jinja library wraps a raised error in its own text; the
	// template's message is kept aside to report it as it was raised.
	var raised *RaisedError
	maps.Copy(vars, map[string]any{
		"messages":              list,
		"bos_token":             opts.BOSToken,
		"eos_token":             opts.EOSToken,
		"add_generation_prompt": opts.AddGenerationPrompt,
		"raise_exception": func(msg string) (string, error) {
			if raised == nil {
				raised = &RaisedError{Message: msg}
			}
			return "", raised
		},
		"strftime_now": strftimeNow,
	})
	ctx := exec.NewContext(vars)
	out, err = t.jinja.ExecuteToString(ctx)
	if err != nil {
		if raised != nil {
			return "", raised
		}
		return "", fmt.Errorf("%w: %v", ErrTemplate, err)
	}
	return out, nil
}

// strftimeNow serves templates (Llama 3.x) that print today's date; it maps
// the few strftime directives those templates use to Go layouts.
func strftimeNow(format string) string {
	r := strings.NewReplacer("%d", "02", "%b", "Jan", "%B", "January", "%Y", "2006", "%m", "01", "%y", "06", "%H", "15", "%M", "04", "%S", "05")
	return time.Now().Format(r.Replace(format))
}
