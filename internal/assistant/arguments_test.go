package assistant

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestFixArguments(t *testing.T) {
	tests := []struct {
		name, generated, fixed, want string
	}{
		{"no fixed members leaves the model's bytes", `{"b": 1,  "a": [1, 2]}`, `{}`, `{"b": 1,  "a": [1, 2]}`},
		{"a fixed member keeps the model's place", `{"location":"Манжерок","num_days":10}`, `{"num_days":3}`, `{"location":"Манжерок","num_days":3}`},
		{"members the model left out follow in the caller's order", `{"location":"Oslo"}`, `{"units":"metric","days":2}`, `{"location":"Oslo","units":"metric","days":2}`},
		{"every member fixed", `{"a":1,"b":2}`, `{"b":"x","a":{"k":[true,null]}}`, `{"a":{"k":[true,null]},"b":"x"}`},
		{"an empty generated object", `{}`, `{"a":1}`, `{"a":1}`},
		{"a member the model wrote twice goes out once", `{"a":1,"b":2,"a":3}`, `{"a":0}`, `{"a":0,"b":2}`},
		{"a key given twice by the caller: the last counts", `{"x":1}`, `{"a":1,"a":2}`, `{"x":1,"a":2}`},
		{"keys with escapes and markup keep them", `{"<b>":1,"q\"":2}`, `{"q\"":"é"}`, `{"<b>":1,"q\"":"é"}`},
		{"values are compacted", `{"a": { "b" : 1 }}`, `{"c" : [ 1 , 2 ]}`, `{"a":{"b":1},"c":[1,2]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := fixArguments(json.RawMessage(tt.generated), json.RawMessage(tt.fixed))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Fatalf("got %s, want %s", got, tt.want)
			}
		})
	}
	for _, bad := range [][2]string{{`[1]`, `{"a":1}`}, {`{"a":1}`, `[1]`}, {`{"a":1} {}`, `{"b":1}`}, {`{"a":}`, `{"b":1}`}, {`"s"`, `{"b":1}`}} {
		if got, err := fixArguments(json.RawMessage(bad[0]), json.RawMessage(bad[1])); err == nil {
			t.Errorf("fixArguments(%s, %s) = %s, want an error", bad[0], bad[1], got)
		}
	}
}

// FuzzFixArguments: for any two objects the result is an object that holds
// each fixed member with the caller's value and each other member of the
// model's with the model's value, and nothing else.
func FuzzFixArguments(f *testing.F) {
	f.Add(`{"location":"Oslo","num_days":10}`, `{"num_days":3,"units":"metric"}`)
	f.Add(`{}`, `{}`)
	f.Add(`{"a":1,"a":2}`, `{"a":[{}]}`)
	f.Fuzz(func(t *testing.T, generated, fixed string) {
		var gen, fix map[string]any
		if json.Unmarshal([]byte(generated), &gen) != nil || gen == nil || json.Unmarshal([]byte(fixed), &fix) != nil || fix == nil {
			return
		}
		got, err := fixArguments(json.RawMessage(generated), json.RawMessage(fixed))
		if err != nil {
			t.Fatalf("fixArguments(%s, %s): %v", generated, fixed, err)
		}
		var out map[string]any
		if err := json.Unmarshal(got, &out); err != nil || out == nil {
			t.Fatalf("fixArguments(%s, %s) = %s: not an object (%v)", generated, fixed, got, err)
		}
		want := map[string]any{}
		for k, v := range gen {
			want[k] = v
		}
		for k, v := range fix {
			want[k] = v
		}
		if !reflect.DeepEqual(out, want) {
			t.Fatalf("fixArguments(%s, %s) = %s, want the members %v", generated, fixed, got, want)
		}
	})
}
