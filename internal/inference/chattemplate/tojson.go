package chattemplate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/nikolalohinski/gonja/v2/exec"
)

// keyOrders holds, while a render runs, the key order of every object
// Render built from JSON or from its own tool dictionaries (by the map's
// identity): templates need real maps to index and iterate, and Go maps
// forget their order, but Hugging Face's tojson writes keys as inserted.
// Maps a template builds itself are not listed and are written sorted.
var keyOrders sync.Map // uintptr → []string

// keyOrder is m's keys in their recorded order, or sorted when sorted is
// set or m's order was not recorded (or keys were added since).
func keyOrder(m map[string]any, sorted bool) []string {
	if m == nil {
		return nil
	}
	keys, _ := keyOrders.Load(reflect.ValueOf(m).Pointer())
	order, _ := keys.([]string)
	if len(order) == len(m) && !sorted {
		return order
	}
	return slices.Sorted(maps.Keys(m))
}

// orderRecorder lists in keyOrders the maps one render builds, until
// release removes them.
type orderRecorder struct{ maps []uintptr }

func (r *orderRecorder) record(m map[string]any, keys []string) {
	p := reflect.ValueOf(m).Pointer()
	keyOrders.Store(p, keys)
	r.maps = append(r.maps, p)
}

func (r *orderRecorder) release() {
	for _, p := range r.maps {
		keyOrders.Delete(p)
	}
}

// object builds a map for the template from key/value pairs, recording
// their order.
func (r *orderRecorder) object(kv ...any) map[string]any {
	m := make(map[string]any, len(kv)/2)
	keys := make([]string, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		k := kv[i].(string)
		m[k] = kv[i+1]
		keys = append(keys, k)
	}
	r.record(m, keys)
	return m
}

// decode decodes raw JSON for the template, objects as maps whose key order
// is recorded and numbers as int where they are integers; invalid JSON
// stays a string.
func (r *orderRecorder) decode(raw json.RawMessage) any {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	v, err := r.decodeValue(d)
	if err != nil || d.More() {
		return string(raw)
	}
	if _, err := d.Token(); err == nil {
		return string(raw) // trailing data
	}
	return v
}

func (r *orderRecorder) decodeValue(d *json.Decoder) (any, error) {
	t, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t := t.(type) {
	case json.Delim:
		switch t {
		case '{':
			m := map[string]any{}
			var keys []string
			for d.More() {
				kt, err := d.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := r.decodeValue(d)
				if err != nil {
					return nil, err
				}
				if _, dup := m[k]; !dup {
					keys = append(keys, k)
				}
				m[k] = v
			}
			if _, err := d.Token(); err != nil {
				return nil, err
			}
			r.record(m, keys)
			return m, nil
		case '[':
			l := []any{}
			for d.More() {
				v, err := r.decodeValue(d)
				if err != nil {
					return nil, err
				}
				l = append(l, v)
			}
			if _, err := d.Token(); err != nil {
				return nil, err
			}
			return l, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return int(i), nil
		}
		// An integer past int64 stays its literal, which tojson writes
		// as it came: Python's json keeps integers of any size, and a
		// float would turn a 20-digit account number into 4.07e+19.
		if !strings.ContainsAny(t.String(), ".eE") {
			return t, nil
		}
		f, err := t.Float64()
		return f, err
	default:
		return t, nil // string, bool or nil
	}
}

// filterToJSON is Hugging Face's tojson: json.dumps(x, ensure_ascii=False,
// indent=indent, separators=separators, sort_keys=sort_keys).
func filterToJSON(_ *exec.Evaluator, in *exec.Value, params *exec.VarArgs) *exec.Value {
	if in.IsError() {
		return in
	}
	enc := pyJSON{item: ", ", key: ": "}
	for name, v := range params.KwArgs {
		switch name {
		case "indent":
			if !v.IsNil() {
				enc.indent, enc.item = strings.Repeat(" ", v.Integer()), ","
			}
		case "sort_keys":
			enc.sortKeys = v.IsTrue()
		case "separators":
			if v.IsList() && v.Len() == 2 {
				enc.item, enc.key = v.Index(0).String(), v.Index(1).String()
			}
		}
	}
	var b strings.Builder
	if err := enc.write(&b, in.Interface(), 0); err != nil {
		return exec.AsValue(err)
	}
	return exec.AsSafeValue(b.String())
}

// pyJSON writes values as Python's json.dumps with ensure_ascii=False.
type pyJSON struct {
	item, key, indent string
	sortKeys          bool
}

func (p pyJSON) write(b *strings.Builder, v any, depth int) error {
	if depth > 100 {
		return errors.New("tojson: value nested too deeply")
	}
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case *exec.Value:
		return p.write(b, v.Interface(), depth)
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case string:
		pyQuote(b, v)
	case json.Number:
		b.WriteString(v.String())
	case int:
		b.WriteString(strconv.Itoa(v))
	case int64:
		b.WriteString(strconv.FormatInt(v, 10))
	case float64:
		b.WriteString(pyFloat(v))
	case float32:
		b.WriteString(pyFloat(float64(v)))
	case []any:
		return p.list(b, len(v), func(i int) any { return v[i] }, depth)
	case map[string]any:
		return p.object(b, keyOrder(v, p.sortKeys), func(k string) any { return v[k] }, depth)
	case *exec.Dict:
		return p.dict(b, v, depth)
	case exec.Dict:
		return p.dict(b, &v, depth)
	default:
		rv := reflect.ValueOf(v)
		switch rv.Kind() {
		case reflect.Slice, reflect.Array:
			return p.list(b, rv.Len(), func(i int) any { return rv.Index(i).Interface() }, depth)
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			fmt.Fprint(b, v)
		default:
			return fmt.Errorf("tojson: %T is not JSON serializable", v)
		}
	}
	return nil
}

func (p pyJSON) dict(b *strings.Builder, d *exec.Dict, depth int) error {
	keys := make([]string, len(d.Pairs))
	vals := map[string]any{}
	for i, pair := range d.Pairs {
		keys[i] = pair.Key.String()
		vals[keys[i]] = pair.Value
	}
	if p.sortKeys {
		slices.Sort(keys)
	}
	return p.object(b, keys, func(k string) any { return vals[k] }, depth)
}

func (p pyJSON) list(b *strings.Builder, n int, at func(int) any, depth int) error {
	if n == 0 {
		b.WriteString("[]")
		return nil
	}
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteString(p.item)
		}
		p.newline(b, depth+1)
		if err := p.write(b, at(i), depth+1); err != nil {
			return err
		}
	}
	p.newline(b, depth)
	b.WriteByte(']')
	return nil
}

func (p pyJSON) object(b *strings.Builder, keys []string, at func(string) any, depth int) error {
	if len(keys) == 0 {
		b.WriteString("{}")
		return nil
	}
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteString(p.item)
		}
		p.newline(b, depth+1)
		pyQuote(b, k)
		b.WriteString(p.key)
		if err := p.write(b, at(k), depth+1); err != nil {
			return err
		}
	}
	p.newline(b, depth)
	b.WriteByte('}')
	return nil
}

func (p pyJSON) newline(b *strings.Builder, depth int) {
	if p.indent != "" {
		b.WriteByte('\n')
		b.WriteString(strings.Repeat(p.indent, depth))
	}
}

// pyQuote writes s as json.dumps(s, ensure_ascii=False) does: only the
// quote, the backslash and control characters are escaped.
func pyQuote(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20:
			fmt.Fprintf(b, `\u%04x`, r)
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\ufffd`)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	b.WriteByte('"')
}

// pyFloat formats f as Python's float repr.
func pyFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	if a := math.Abs(f); a != 0 && (a < 1e-4 || a >= 1e16) {
		s := strconv.FormatFloat(f, 'e', -1, 64)
		// Go writes e+07 as Python does; both keep at least two digits.
		return s
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}
