package chattemplate

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// This file finds every string of a conversation that comes from the
// request rather than from the template, and rewrites it for the renderings
// RenderPieces compares (pieces.go).
//
// Request text is: a message's content and name, a function call's name and
// arguments, and an offered function's name, description and parameters.
// Roles are not: callers pass one of a fixed set, and templates compare them
// with their own literals. Inside JSON (parameters, arguments) every string
// value is request text but JSON Schema's type names (schemaTypes), which
// templates that write a schema out as text compare with their literals
// ("param.type == 'array'"). Object keys are request text when they could
// carry a control token (plainKey): templates look keys up by name
// ("parameters.properties", "arguments.city"), which a marked key would
// fail, and print them ("<parameter=" + name + ">"). Numbers, true, false
// and null stay as they are: they render as digits, signs, '.', 'e' and
// those three words.

// marking rewrites request text with markers of one nonce: U+E000, the
// nonce, '[' or ']' (open or close), the value's index, U+E001. The nonce
// is decimal digits and the markers hold no letters, so that upper(),
// lower() and title() leave them as they are, and none of their characters
// is one that tojson or Go's JSON encoder escapes.
type marking struct {
	prefix string // U+E000 and the nonce
	// controls are the spellings the caller's tokenizer parses as control
	// tokens (Options.ControlTokens).
	controls []string
	// keys are the request's object keys that stay unmarked (plainKey);
	// a string value equal to one stays unmarked too, so that a template
	// finding a key in a list of them ("if name in parameters.required")
	// finds it as it would in the request.
	keys  map[string]bool
	index map[string]int
	forms [][]string // by index: the texts a value may stand as in a prompt
	// collided is set when request text holds the prefix itself, which
	// would let it forge a marker; the caller then draws another nonce.
	collided bool
}

func newMarking(nonce uint64, controls []string) *marking {
	return &marking{prefix: "\uE000" + strconv.FormatUint(nonce, 10), controls: controls, index: map[string]int{}}
}

func (m *marking) open(i int) string  { return m.prefix + "[" + strconv.Itoa(i) + "\uE001" }
func (m *marking) close(i int) string { return m.prefix + "]" + strconv.Itoa(i) + "\uE001" }

// indexOf numbers distinct values. Equal texts share an index, so that a
// template comparing two request strings ("if name in required") compares
// equal markers as it compared equal texts.
func (m *marking) indexOf(s string, forms ...string) int {
	if strings.Contains(s, m.prefix) {
		m.collided = true
	}
	i, ok := m.index[s]
	if !ok {
		i = len(m.forms)
		m.index[s] = i
		m.forms = append(m.forms, []string{s, jsonInner(s, false), jsonInner(s, true)})
	}
	for _, f := range forms {
		if !contains(m.forms[i], f) {
			m.forms[i] = append(m.forms[i], f)
		}
	}
	return i
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// jsonInner is s as a JSON string literal writes it, without the quotes:
// as tojson writes it (Python's json.dumps with ensure_ascii=False) or, with
// goHTML, as encoding/json does (<, > and & escaped), which is how the
// tools preamble of templates without a tools section spells it.
func jsonInner(s string, goHTML bool) string {
	var b strings.Builder
	if goHTML {
		q, _ := json.Marshal(s)
		return string(q[1 : len(q)-1])
	}
	pyQuote(&b, s)
	q := b.String()
	return q[1 : len(q)-1]
}

// str marks one request string: the open marker after its leading
// whitespace and the close marker before its trailing whitespace, so that a
// template that trims it (Llama 3's "| trim") trims what it would have
// trimmed; with empty set, nothing is left between the markers (the
// rendering whose every character outside markers is the template's).
// Empty and all-whitespace strings are left as they are: templates test
// contents for emptiness ("if message.content"), and whitespace spells no
// control token.
func (m *marking) str(s string, empty bool) string {
	core := strings.TrimSpace(s)
	if core == "" {
		return s
	}
	i := m.indexOf(s)
	lead := s[:strings.Index(s, core)]
	trail := s[len(lead)+len(core):]
	if empty {
		core = ""
	}
	return lead + m.open(i) + core + m.close(i) + trail
}

// raw marks the strings of a JSON value in place: each literal keeps the
// bytes it was written with between the markers, so that a template that
// prints the JSON as given (the tools preamble) prints the same text. JSON
// that does not parse reaches templates as a string and is marked as one.
func (m *marking) raw(raw json.RawMessage, empty bool) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 {
		return raw
	}
	if !json.Valid(raw) {
		return json.RawMessage(m.str(string(raw), empty))
	}
	var out []byte
	for i := 0; i < len(raw); {
		if raw[i] != '"' {
			out = append(out, raw[i])
			i++
			continue
		}
		j := closingQuote(raw, i)
		lit := raw[i : j+1]
		i = j + 1
		var s string
		if json.Unmarshal(lit, &s) != nil || strings.TrimSpace(s) == "" {
			out = append(out, lit...)
			continue
		}
		if m.keys[s] || !isKey(raw[i:]) && schemaTypes[s] {
			out = append(out, lit...)
			continue
		}
		inner := lit[1 : len(lit)-1]
		k := m.indexOf(s, string(inner))
		out = append(out, '"')
		out = append(out, m.open(k)...)
		if !empty {
			out = append(out, inner...)
		}
		out = append(out, m.close(k)...)
		out = append(out, '"')
	}
	return out
}

// plainKeys adds raw's object keys that may stay unmarked to m.keys.
func (m *marking) plainKeys(raw json.RawMessage) {
	if !json.Valid(raw) {
		return
	}
	strs(raw, func(s string, key bool) {
		if key && m.plainKey(s) {
			m.keys[s] = true
		}
	})
}

// closingQuote is the index of the quote that closes the string literal
// opening at raw[i] in valid JSON raw.
func closingQuote(raw []byte, i int) int {
	j := i + 1
	for raw[j] != '"' {
		if raw[j] == '\\' {
			j++
		}
		j++
	}
	return j
}

// strs calls f with every string literal of valid JSON raw, decoded, and
// whether it is an object key.
func strs(raw []byte, f func(s string, key bool)) {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '"' {
			continue
		}
		j := closingQuote(raw, i)
		var s string
		if json.Unmarshal(raw[i:j+1], &s) == nil {
			f(s, isKey(raw[j+1:]))
		}
		i = j
	}
}

// isKey reports whether the JSON that follows a string literal makes it an
// object key.
func isKey(rest []byte) bool {
	rest = bytes.TrimLeft(rest, " \t\r\n")
	return len(rest) > 0 && rest[0] == ':'
}

// schemaTypes are JSON Schema's type names, left unmarked as string values:
// templates that write a schema out as text (Hermes 2 Pro, Functionary,
// Command R) compare types with them, which marked strings would fail. They
// are a fixed vocabulary the API defines, not text a client words.
var schemaTypes = map[string]bool{
	"object": true, "array": true, "string": true, "number": true, "integer": true, "boolean": true, "null": true,
}

// plainKey reports whether an object key may stay unmarked: letters,
// digits, '_' and '$' only, and no control token's spelling. Such a key
// brings none of the punctuation control tokens are spelled with ("<|",
// "[", ">"), so it becomes part of one only where the template itself
// writes that punctuation around it, as it writes "<|" + role + "|>"; and
// one spelled as a control token ("sop" in some vocabularies) is marked.
func (m *marking) plainKey(s string) bool {
	for _, r := range s {
		if !(r == '_' || r == '$' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	for _, c := range m.controls {
		if c != "" && strings.Contains(s, c) {
			return false
		}
	}
	return true
}

// apply returns copies of msgs and opts with every request string marked;
// msgs and opts are not changed. Both renderings RenderPieces compares are
// marked by one marking, walking the values in one order, so that a value
// has one index in both.
func (m *marking) apply(msgs []Message, opts Options, empty bool) ([]Message, Options) {
	if m.keys == nil {
		m.keys = map[string]bool{}
		for _, msg := range msgs {
			if msg.ToolCall != nil {
				m.plainKeys(msg.ToolCall.Arguments)
			}
		}
		for _, tool := range opts.Tools {
			m.plainKeys(tool.Parameters)
		}
	}
	out := make([]Message, len(msgs))
	for i, msg := range msgs {
		msg.Content = m.str(msg.Content, empty)
		msg.Name = m.str(msg.Name, empty)
		if msg.ToolCall != nil {
			call := *msg.ToolCall
			call.Name = m.str(call.Name, empty)
			call.Arguments = m.raw(call.Arguments, empty)
			msg.ToolCall = &call
		}
		out[i] = msg
	}
	if len(opts.Tools) > 0 {
		tools := make([]Tool, len(opts.Tools))
		for i, tool := range opts.Tools {
			tool.Name = m.str(tool.Name, empty)
			tool.Description = m.str(tool.Description, empty)
			tool.Parameters = m.raw(tool.Parameters, empty)
			tools[i] = tool
		}
		opts.Tools = tools
	}
	return out, opts
}

// markItem is a run of marked text: text, or a marker (text empty).
type markItem struct {
	text string
	idx  int // the marker's value; -1 for text
	open bool
}

// parse splits s into text and markers. A marker that starts with the
// prefix but is cut short or altered is an error: the template took a
// marker apart, and where a value starts or ends is then unknown. Request
// text cannot hold the prefix (collided), so only markers start with it.
func (m *marking) parse(s string) ([]markItem, bool) {
	var items []markItem
	for s != "" {
		i := strings.Index(s, m.prefix)
		if i < 0 {
			items = append(items, markItem{text: s, idx: -1})
			break
		}
		if i > 0 {
			items = append(items, markItem{text: s[:i], idx: -1})
		}
		s = s[i+len(m.prefix):]
		end := strings.Index(s, "\uE001")
		if end < 2 || (s[0] != '[' && s[0] != ']') {
			return nil, false
		}
		idx, err := strconv.Atoi(s[1:end])
		if err != nil || idx < 0 || idx >= len(m.forms) || strconv.Itoa(idx) != s[1:end] {
			return nil, false
		}
		items = append(items, markItem{idx: idx, open: s[0] == '['})
		s = s[end+len("\uE001"):]
	}
	return items, true
}

// skeleton is a marked rendering seen from outside the values: texts[0],
// the value idxs[0], texts[1], …, texts[len(idxs)]. inner is, for each
// value, the text between its markers (markers of values nested in it
// removed); texts are what lies outside every value.
type skeleton struct {
	texts []string
	idxs  []int
	inner []string
}

// skeletonOf reads items. Markers must pair up, each close the latest open
// of its value; a value inside another (a template that puts one value into
// another's text) counts as part of the outer one.
func skeletonOf(items []markItem) (skeleton, bool) {
	sk := skeleton{texts: []string{""}}
	var stack []int
	var out, in strings.Builder
	for _, it := range items {
		switch {
		case it.idx < 0 && len(stack) == 0:
			out.WriteString(it.text)
		case it.idx < 0:
			in.WriteString(it.text)
		case it.open:
			if len(stack) == 0 {
				sk.texts[len(sk.texts)-1] = out.String()
				out.Reset()
				sk.idxs = append(sk.idxs, it.idx)
			}
			stack = append(stack, it.idx)
		default:
			if len(stack) == 0 || stack[len(stack)-1] != it.idx {
				return skeleton{}, false
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				sk.inner = append(sk.inner, in.String())
				in.Reset()
				sk.texts = append(sk.texts, "")
			}
		}
	}
	if len(stack) > 0 {
		return skeleton{}, false
	}
	sk.texts[len(sk.texts)-1] = out.String()
	return sk, true
}

// sameOutside reports whether a and b have the same text outside values and
// the same values in the same places.
func sameOutside(a, b skeleton) bool {
	if len(a.idxs) != len(b.idxs) {
		return false
	}
	for i := range a.idxs {
		if a.idxs[i] != b.idxs[i] {
			return false
		}
	}
	for i := range a.texts {
		if a.texts[i] != b.texts[i] {
			return false
		}
	}
	return true
}
