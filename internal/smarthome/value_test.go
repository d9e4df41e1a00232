package smarthome

import (
	"encoding/json"
	"testing"
)

// FuzzValue holds the value parser's invariants on any JSON: reading never
// fails, and a value whose payload could be read survives its canonical
// encoding: read again, it is the same value.
func FuzzValue(f *testing.F) {
	for _, s := range []string{
		`{"type":"INTEGER","integer_value":"22"}`, `{"type":"INTEGER","integer_value":22}`,
		`{"type":"INTEGER","integer_value":"22.5"}`, `{"type":"FLOAT","float_value":"1.5"}`,
		`{"type":"BOOL","bool_value":"yes"}`, `{"type":"COLOUR","colour_value":{"h":1,"s":2,"v":3}}`,
		`{"type":"COLOUR","colour_value":{"h":1,"v":3}}`, `{"type":"COLOUR","colour_value":{"h":1,"s":null,"v":3,"x":"y"}}`,
		`{"type":"ENUM","enum_value":"colour","bool_value":true}`, `"colour"`, `null`, `{"type":7}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		var v Value
		if err := v.UnmarshalJSON(b); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if v.unreadable() != "" || !v.present() {
			return
		}
		out, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		var w Value
		if err := json.Unmarshal(out, &w); err != nil || !v.equal(w) || w.unreadable() != "" {
			t.Fatalf("%s → %s → %+v (%v)", b, out, w, err)
		}
	})
}
