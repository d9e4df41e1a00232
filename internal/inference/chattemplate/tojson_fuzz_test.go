package chattemplate

import (
	"bytes"
	"encoding/json"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sameJSON reports whether a (sent) and b (written) hold the same JSON
// value as Python's json reads them: an integer exactly, whatever its
// size (12345678901234567890 is not 1.2345678901234567e+19), a number
// with a fraction or an exponent as the float64 it rounds to
// (20000000000000.101 is 20000000000000.1, and 1e2 is 100.0).
func sameJSON(a, b any) bool {
	switch a := a.(type) {
	case json.Number:
		b, ok := b.(json.Number)
		if !ok {
			return false
		}
		if strings.ContainsAny(a.String(), ".eE") {
			x, errA := a.Float64()
			y, errB := b.Float64()
			return errA == nil && errB == nil && x == y
		}
		x, okA := new(big.Int).SetString(a.String(), 10)
		y, okB := new(big.Int).SetString(b.String(), 10)
		return okA && okB && x.Cmp(y) == 0
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, v := range a {
			if w, ok := b[k]; !ok || !sameJSON(v, w) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !sameJSON(a[i], b[i]) {
				return false
			}
		}
		return true
	default:
		return a == b
	}
}

func decodeNumbers(t *testing.T, s string) any {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return v
}

// FuzzToJSONRoundTrip holds the JSON a template's tojson writes of a
// request's function arguments and parameter schemas (decoded by
// orderRecorder.decode, written by pyJSON as json.dumps) to the JSON the
// client sent: valid JSON again, with every value the same, numbers to
// the last digit (Python's json keeps integers of any size exactly), and
// the keys in the order sent.
func FuzzToJSONRoundTrip(f *testing.F) {
	for _, s := range []string{`{"account":"40702810538833411733","amount":1500.5}`, `{"n":40702810538833411733}`,
		`{"a":[1,2.0,-0,1e2,1E-7,true,null],"b":{"c":"\u0000\t\"\\"}}`, `{"type":"object","properties":{"q":{"type":"string"}}}`,
		`[{"a":1,"a":2}]`, `"\u2028x\ud800"`, `0.1`, `123456789012345678`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !json.Valid([]byte(s)) || strings.Count(s, "[")+strings.Count(s, "{") > 90 {
			return
		}
		var r orderRecorder
		defer r.release()
		v := r.decode(json.RawMessage(s))
		if str, ok := v.(string); ok && str == s && !strings.HasPrefix(strings.TrimSpace(s), `"`) {
			// Left a string: only for a number past float64, which
			// Python writes as Infinity, not JSON either.
			return
		}
		var b strings.Builder
		if err := (pyJSON{item: ", ", key: ": "}).write(&b, v, 0); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		out := b.String()
		if !json.Valid([]byte(out)) {
			t.Fatalf("tojson of %q wrote %q, not JSON", s, out)
		}
		if !sameJSON(decodeNumbers(t, s), decodeNumbers(t, out)) {
			t.Fatalf("tojson of %q wrote %q, another value", s, out)
		}
		// The first key written is the first key sent.
		if m, ok := v.(map[string]any); ok && len(m) > 0 {
			d := json.NewDecoder(bytes.NewReader([]byte(s)))
			d.Token()
			first, _ := d.Token()
			if !strings.HasPrefix(out, "{"+quotePy(first.(string))+": ") {
				t.Fatalf("tojson of %q wrote %q, keys out of order", s, out)
			}
		}
	})
}

func quotePy(s string) string {
	var b strings.Builder
	pyQuote(&b, s)
	return b.String()
}

// TestToJSONBigInteger: an integer past int64 in a call's arguments or a
// tool's schema reaches the prompt digit for digit, as Python's json
// writes it, not as the float 4.070281053883341e+19 (found by
// FuzzToJSONRoundTrip).
func TestToJSONBigInteger(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "qwen2.5.jinja"))
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := Parse(string(src))
	if err != nil {
		t.Fatal(err)
	}
	got, err := tpl.Render([]Message{{Role: "user", Content: "Pay"},
		{Role: "assistant", ToolCall: &ToolCall{Name: "pay", Arguments: []byte(`{"account":40702810538833411733,"n":-9223372036854775809,"x":1e2}`)}}},
		Options{Tools: []Tool{{Name: "pay", Parameters: []byte(`{"type":"object","maximum":99999999999999999999}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"arguments": {"account": 40702810538833411733, "n": -9223372036854775809, "x": 100.0}`,
		`"maximum": 99999999999999999999`} {
		if !strings.Contains(got, want) {
			t.Errorf("rendered prompt lacks %s:\n%s", want, got)
		}
	}
}
