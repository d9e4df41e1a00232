package jsonexact

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

type inner struct {
	Member string `json:"member"`
}

type base struct {
	Shared string `json:"shared"`
	Own    string `json:"baseOwn"`
}

// self reads itself: its member names are its UnmarshalJSON's business.
type self struct {
	Member string `json:"member"`
}

func (s *self) UnmarshalJSON(b []byte) error {
	var m map[string]string
	err := json.Unmarshal(b, &m)
	s.Member = m["MEMBER"]
	return err
}

type doc struct {
	base
	Self    *self             `json:"self"`
	Amount  json.Number       `json:"amount"`
	Shared  string            `json:"shared"` // shadows base's
	Inner   *inner            `json:"inner"`
	List    []inner           `json:"list"`
	ByKey   map[string]inner  `json:"byKey"`
	Raw     json.RawMessage   `json:"raw"`
	Any     any               `json:"any"`
	Plain   string            // no tag: its Go name
	Skipped string            `json:"-"`
	Extra   map[string]string `json:"extra,omitempty"`
}

// A member that names a field only in another case is ignored, as an
// unknown member is, wherever the field is (nested, in a list, in a map's
// values, promoted from an embedded struct); exact names, unknown names,
// map keys and the insides of raw and untyped values are left alone.
func TestNames(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       doc
	}{
		{"exact names", `{"amount":1.5,"inner":{"member":"a"},"Plain":"p","baseOwn":"b"}`,
			doc{Amount: "1.5", Inner: &inner{"a"}, Plain: "p", base: base{Own: "b"}}},
		{"another case alone", `{"Amount":7}`, doc{}},
		{"both cases, the exact one first", `{"amount":1,"AMOUNT":100}`, doc{Amount: "1"}},
		{"both cases, the exact one last", `{"AMOUNT":100,"amount":1}`, doc{Amount: "1"}},
		{"nested", `{"inner":{"Member":"x"}}`, doc{Inner: &inner{}}},
		{"in a list", `{"list":[{"member":"a"},{"MEMBER":"b"}]}`, doc{List: []inner{{"a"}, {}}}},
		{"in a map's values, keys kept", `{"byKey":{"Member":{"mEmber":"x","member":"y"}}}`, doc{ByKey: map[string]inner{"Member": {"y"}}}},
		{"promoted from an embedded struct", `{"BaseOwn":"x","baseOwn":"y"}`, doc{base: base{Own: "y"}}},
		{"a Go name in another case", `{"plain":"x"}`, doc{}},
		{"an escaped name", `{"A\u006dount":3,"\u0061mount":4}`, doc{Amount: "4"}},
		{"the Kelvin sign folds to k", "{\"byKey\":{},\"by\u212Aey\":{\"x\":{\"member\":\"z\"}}}", doc{ByKey: map[string]inner{}}},
		{"raw and untyped insides", `{"raw":{"Amount":1},"any":{"AMOUNT":2}}`,
			doc{Raw: json.RawMessage(`{"Amount":1}`), Any: map[string]any{"AMOUNT": 2.0}}},
		{"the skipped field's name is unknown", `{"Skipped":"x"}`, doc{}},
		{"the shadowing field wins", `{"shared":"x"}`, doc{Shared: "x"}},
		{"a type that reads itself is left to it", `{"self":{"MEMBER":"x"}}`, doc{Self: &self{"x"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got doc
			out := Names([]byte(tc.body), &got)
			if len(out) != len(tc.body) {
				t.Fatalf("length %d, want %d", len(out), len(tc.body))
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("%s: %v", out, err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s decodes to %+v, want %+v", out, got, tc.want)
			}
		})
	}
}

// Inexact names the first member Names would rewrite, spelt as the body
// spells it (escapes decoded), wherever it is, and nothing in bodies Names
// leaves alone.
func TestInexact(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"amount":1,"inner":{"member":"a"},"Plain":"p"}`, ""},
		{`{"Amount":7}`, "Amount"},
		{`{"amount":1,"inner":{"Member":"x"},"AMOUNT":2}`, "Member"},
		{`{"list":[{"member":"a"},{"MEMBER":"b"}]}`, "MEMBER"},
		{`{"byKey":{"Member":{"mEmber":"x"}}}`, "mEmber"},
		{`{"BaseOwn":"x"}`, "BaseOwn"},
		{`{"A\u006dount":3}`, "Amount"},
		{`{"raw":{"Amount":1},"any":{"AMOUNT":2},"unknown":1}`, ""},
		{`{"self":{"MEMBER":"x"}}`, ""},
		{`{"Amount":`, "Amount"},
		{`nonsense`, ""},
	} {
		if got := Inexact([]byte(tc.body), &doc{}); got != tc.want {
			t.Errorf("Inexact(%s) = %q, want %q", tc.body, got, tc.want)
		}
	}
}

// The body itself comes back when there is nothing to rewrite, or when it
// is not JSON the walker can read (encoding/json reports why), and a
// rewrite never touches the caller's body.
func TestNamesLeavesBody(t *testing.T) {
	for _, body := range []string{`{"amount":1}`, `{"amount":`, `[1,2`, `nonsense`, ``, `{"a":1}}`} {
		b := []byte(body)
		if out := Names(b, &doc{}); len(b) > 0 && &out[0] != &b[0] {
			t.Errorf("%q: a copy, want the body", body)
		}
	}
	b := []byte(`{"Amount":1}`)
	Names(b, &doc{})
	if string(b) != `{"Amount":1}` {
		t.Errorf("the body became %s", b)
	}
}

// Offsets stay where they were, so encoding/json's errors on the rewritten
// body point at the client's bytes.
func TestNamesKeepsErrorOffsets(t *testing.T) {
	body := []byte(`{"AMOUNT":1,"inner":{"member":5}}`)
	var d1, d2 doc
	e1 := json.Unmarshal(body, &d1)
	e2 := json.Unmarshal(Names(body, &d2), &d2)
	var t1, t2 *json.UnmarshalTypeError
	if !asType(e1, &t1) || !asType(e2, &t2) || t1.Offset != t2.Offset || t1.Field != t2.Field {
		t.Fatalf("errors %v / %v", e1, e2)
	}
}

func asType(err error, target **json.UnmarshalTypeError) bool {
	te, ok := err.(*json.UnmarshalTypeError)
	*target = te
	return ok
}

func FuzzNames(f *testing.F) {
	for _, s := range []string{`{"amount":1,"AMOUNT":2}`, `{"list":[{"MEMBER":"b"}]}`, `{"A\u006dount":3}`, `[]`, `{"byKey":{"x":{"Member":1}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		orig := bytes.Clone(body)
		out := Names(body, &doc{})
		if !bytes.Equal(body, orig) {
			t.Fatal("the body was written to")
		}
		if len(out) != len(body) || json.Valid(out) != json.Valid(body) {
			t.Fatalf("%q became %q", body, out)
		}
		if again := Names(out, &doc{}); !bytes.Equal(again, out) {
			t.Fatalf("not idempotent: %q then %q", out, again)
		}
		// Every byte that changed is a '~' inside a member name.
		for i := range out {
			if out[i] != body[i] && out[i] != '~' {
				t.Fatalf("byte %d: %q became %q", i, body[i], out[i])
			}
		}
		// What decodes from the rewritten body has no top-level member in
		// another case of a field's name.
		var m map[string]json.RawMessage
		if json.Unmarshal(out, &m) == nil {
			for k := range m {
				for _, f := range []string{"amount", "shared", "inner", "list", "byKey", "raw", "any", "Plain", "baseOwn", "extra"} {
					if k != f && strings.EqualFold(k, f) {
						t.Fatalf("%q kept %q", out, k)
					}
				}
			}
		}
	})
}

// BenchmarkNames prices the pre-pass against the decode it precedes, side
// by side, on a body of exact names (the usual case: nothing rewritten).
func BenchmarkNames(b *testing.B) {
	body := []byte(`{"amount":1500.50,"inner":{"member":"` + strings.Repeat("x", 2000) + `"},"list":[{"member":"a"},{"member":"b"}],"byKey":{"k":{"member":"v"}},"Plain":"p","baseOwn":"b"}`)
	b.Run("names", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Names(body, &doc{})
		}
	})
	b.Run("unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var d doc
			_ = json.Unmarshal(body, &d)
		}
	})
}
