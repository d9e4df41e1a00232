// Package jsonexact makes encoding/json match object member names exactly.
//
// encoding/json fills a struct field from a member whose name equals the
// field's name in any case ("Amount" and "AMOUNT" fill `json:"amount"`),
// and when both spellings are present the last one wins. The services this
// binary stands in for match names exactly and ignore members they do not
// know, so a client that misspells the case of a member is refused there
// (a required member is missing) while encoding/json would accept it: the
// client's bug would pass every test against us and fail in production.
// Names rewrites, in a copy of the body, the name of every member that
// matches a field of the target only case-insensitively into one that
// matches nothing, so encoding/json ignores it as it ignores any unknown
// member, and everything else decodes as before.
//
// It is a pre-pass rather than a decoder of its own: encoding/json keeps
// its errors, numbers and custom unmarshalers, and the pass reads the body
// once without allocating when no name needs rewriting (the usual case).
// encoding/json/v2 matches exactly by default, but in Go 1.26 it is behind
// GOEXPERIMENT=jsonv2.
package jsonexact

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"
)

// Names returns body with the names of members that match a field of v's
// type (v is what json.Unmarshal would be given) only in another case
// replaced by '~' characters of the same length, so that offsets in the
// body, which encoding/json's errors report, stay the same. It returns body
// itself when nothing is replaced, and body unchanged when it is not JSON
// (json.Unmarshal will say why).
func Names(body []byte, v any) []byte {
	t := reflect.TypeOf(v)
	if t == nil {
		return body
	}
	w := walker{src: body}
	if !w.value(t) {
		return body
	}
	if w.out == nil {
		return body
	}
	return w.out
}

// Inexact returns the first member name in body, as the body spells it,
// that matches a field of v's type only in another case, and "" when there
// is none or body is not JSON. A decoder that refuses unknown members
// (DisallowUnknownFields) refuses such a name too, naming it, where Names
// would have it ignored: to a strict API "Login" is a member it does not
// know, not a second spelling of "login".
func Inexact(body []byte, v any) string {
	t := reflect.TypeOf(v)
	if t == nil {
		return ""
	}
	w := walker{src: body, find: true}
	w.value(t)
	return w.found
}

// walker scans src; out is the copy being rewritten, nil until the first
// rewrite. Every method returns false at the first byte it cannot read, and
// Names then leaves the body to encoding/json. With find set, the walker
// rewrites nothing: it stops at the first inexact name and keeps it in
// found.
type walker struct {
	src   []byte
	i     int
	out   []byte
	depth int
	find  bool
	found string
}

// maxDepth bounds the nesting the walker follows (encoding/json's own
// limit is 10 000); deeper bodies are left as they are.
const maxDepth = 1000

func (w *walker) space() {
	for w.i < len(w.src) {
		switch w.src[w.i] {
		case ' ', '\t', '\n', '\r':
			w.i++
		default:
			return
		}
	}
}

// value reads one JSON value whose Go type is t (nil: any, whose member
// names do not matter).
func (w *walker) value(t reflect.Type) bool {
	w.space()
	if w.i >= len(w.src) {
		return false
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t != nil && readsItself(t) {
		t = nil
	}
	switch w.src[w.i] {
	case '{':
		return w.object(t)
	case '[':
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		return w.array(elem)
	case '"':
		_, _, ok := w.skipString()
		return ok
	default:
		return w.literal()
	}
}

func (w *walker) object(t reflect.Type) bool {
	if w.depth++; w.depth > maxDepth {
		return false
	}
	defer func() { w.depth-- }()
	var fs *fieldSet
	var elem reflect.Type
	if t != nil {
		switch t.Kind() {
		case reflect.Struct:
			fs = fieldsOf(t)
		case reflect.Map:
			elem = t.Elem()
		}
	}
	w.i++ // {
	w.space()
	if w.i < len(w.src) && w.src[w.i] == '}' {
		w.i++
		return true
	}
	for {
		w.space()
		start, name, ok := w.key()
		if !ok {
			return false
		}
		next := elem
		if fs != nil {
			if f, exact, found := fs.lookup(name); found && exact {
				next = f
			} else if found && w.find {
				w.found = string(name)
				return false
			} else if found {
				w.rewrite(start, w.i)
			}
		}
		w.space()
		if w.i >= len(w.src) || w.src[w.i] != ':' {
			return false
		}
		w.i++
		if !w.value(next) {
			return false
		}
		if end, ok := w.next('}'); !ok || end {
			return ok
		}
	}
}

func (w *walker) array(elem reflect.Type) bool {
	if w.depth++; w.depth > maxDepth {
		return false
	}
	defer func() { w.depth-- }()
	w.i++ // [
	w.space()
	if w.i < len(w.src) && w.src[w.i] == ']' {
		w.i++
		return true
	}
	for {
		if !w.value(elem) {
			return false
		}
		if end, ok := w.next(']'); !ok || end {
			return ok
		}
	}
}

// next reads what follows a member or an element: a comma (end false) or
// the closing bracket close (end true); anything else is not ok.
func (w *walker) next(close byte) (end, ok bool) {
	w.space()
	if w.i >= len(w.src) {
		return false, false
	}
	switch w.src[w.i] {
	case ',':
		w.i++
		return false, true
	case close:
		w.i++
		return true, true
	}
	return false, false
}

// skipString moves past the string at w.i and returns where its opening
// quote is and whether it holds escapes. A value's string is only skipped,
// so a long message costs no copy.
func (w *walker) skipString() (start int, escaped, ok bool) {
	if w.i >= len(w.src) || w.src[w.i] != '"' {
		return 0, false, false
	}
	start = w.i
	for j := w.i + 1; j < len(w.src); j++ {
		switch w.src[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			w.i = j + 1
			return start, escaped, true
		}
	}
	return 0, false, false
}

// key reads a member name at w.i: where its opening quote is and its
// text, unescaped when it holds escapes. Without escapes the text is the
// body's own bytes, read in place (lookup copies nothing to find them).
func (w *walker) key() (start int, name []byte, ok bool) {
	start, escaped, ok := w.skipString()
	if !ok {
		return 0, nil, false
	}
	raw := w.src[start:w.i]
	if !escaped {
		return start, raw[1 : len(raw)-1], true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return 0, nil, false
	}
	return start, []byte(s), true
}

// literal skips a number, true, false or null: the bytes up to the next
// delimiter, which encoding/json checks.
func (w *walker) literal() bool {
	start := w.i
	for w.i < len(w.src) {
		switch w.src[w.i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return w.i > start
		}
		w.i++
	}
	return w.i > start
}

// rewrite replaces the string src[start:end] (quotes included) by '~'s
// between its quotes, in the copy.
func (w *walker) rewrite(start, end int) {
	if w.out == nil {
		w.out = append([]byte(nil), w.src...)
	}
	for j := start + 1; j < end-1; j++ {
		w.out[j] = '~'
	}
}

// fieldSet is the JSON names of a struct type's fields, as encoding/json
// finds them (tags, embedded structs' promoted fields), with their types.
type fieldSet struct {
	exact map[string]reflect.Type
	lower map[string]bool // strings.ToLower of every name
}

// lookup reports the type of the field named name exactly; or, with
// exact false, that name matches a field only in another case. An ASCII
// name of up to 64 bytes is folded on the stack, so the usual lookup
// allocates nothing.
func (fs *fieldSet) lookup(name []byte) (t reflect.Type, exact, found bool) {
	if t, ok := fs.exact[string(name)]; ok {
		return t, true, true
	}
	if isASCII(name) {
		var buf [64]byte
		if len(name) <= len(buf) {
			for i, c := range name {
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				buf[i] = c
			}
			return nil, false, fs.lower[string(buf[:len(name)])]
		}
		return nil, false, fs.lower[strings.ToLower(string(name))]
	}
	// encoding/json folds more than ASCII case (the Kelvin sign, the
	// long s); EqualFold is its rule for other names.
	for n := range fs.exact {
		if strings.EqualFold(n, string(name)) {
			return nil, false, true
		}
	}
	return nil, false, false
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// readsItself reports whether encoding/json hands t's values to t's own
// UnmarshalJSON: what that method makes of member names is its own rule,
// so the walker treats such a value as untyped.
func readsItself(t reflect.Type) bool {
	return t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType)
}

func isASCII(s []byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

var fieldSets sync.Map // reflect.Type → *fieldSet

func fieldsOf(t reflect.Type) *fieldSet {
	if fs, ok := fieldSets.Load(t); ok {
		return fs.(*fieldSet)
	}
	fs := &fieldSet{exact: map[string]reflect.Type{}, lower: map[string]bool{}}
	collect(fs, t, 0)
	for n := range fs.exact {
		fs.lower[strings.ToLower(n)] = true
	}
	v, _ := fieldSets.LoadOrStore(t, fs)
	return v.(*fieldSet)
}

// collect adds t's fields to fs: a field's tag name or its Go name, and the
// fields of an untagged embedded struct as if they were t's own. A name
// taken by a shallower field stays with it, as in encoding/json, so t's own
// fields go in before the embedded structs' (encoding/json also drops a name
// two embedded structs of one depth both have; both stay known here, which
// only matters for a name in another case).
func collect(fs *fieldSet, t reflect.Type, depth int) {
	if depth > 10 {
		return
	}
	var embedded []reflect.Type
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				embedded = append(embedded, ft)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, taken := fs.exact[name]; !taken {
			fs.exact[name] = f.Type
		}
	}
	for _, et := range embedded {
		collect(fs, et, depth+1)
	}
}
