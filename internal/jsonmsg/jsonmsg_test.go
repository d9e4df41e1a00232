package jsonmsg

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestOf: type errors are worded in JSON's terms, whatever Go type the
// member is read into, and no message names a Go type; other errors keep
// their own text.
func TestOf(t *testing.T) {
	type inner struct {
		Name string `json:"name"`
	}
	type doc struct {
		S     string            `json:"s"`
		B     *bool             `json:"b"`
		I     int64             `json:"i"`
		U     uint8             `json:"u"`
		F     float32           `json:"f"`
		L     []string          `json:"l"`
		M     map[string]int    `json:"m"`
		O     *inner            `json:"o"`
		Items []inner           `json:"items"`
		Raw   json.RawMessage   `json:"raw"`
		Any   map[string]string `json:"any"`
	}
	for _, tc := range []struct{ body, want string }{
		{`[]`, "the body: expected an object, got an array"},
		{`"x"`, "the body: expected an object, got a string"},
		{`true`, "the body: expected an object, got a boolean"},
		{`{"s":1}`, "s: expected a string, got a number"},
		{`{"s":{}}`, "s: expected a string, got an object"},
		{`{"b":"yes"}`, "b: expected a boolean, got a string"},
		{`{"i":"1"}`, "i: expected an integer, got a string"},
		{`{"i":1.5}`, "i: expected an integer, got 1.5"},
		{`{"i":1e3}`, "i: expected an integer, got 1e3"},
		{`{"i":99999999999999999999}`, "i: 99999999999999999999 is out of range"},
		{`{"u":-1}`, "u: -1 is out of range"},
		{`{"f":1e40}`, "f: 1e40 is out of range"},
		{`{"l":"x"}`, "l: expected an array, got a string"},
		{`{"l":[true]}`, "l: expected a string, got a boolean"},
		{`{"m":[]}`, "m: expected an object, got an array"},
		{`{"o":{"name":[]}}`, "o.name: expected a string, got an array"},
		{`{"items":[{"name":1}]}`, "items.name: expected a string, got a number"},
		{`{"any":{"k":1}}`, "any: expected a string, got a number"},
		{`{"s":`, "unexpected end of JSON input"},
		{`{"s" 1}`, "invalid character '1' after object key"},
	} {
		var d doc
		err := json.Unmarshal([]byte(tc.body), &d)
		if err == nil {
			t.Fatalf("%s: no error", tc.body)
		}
		got := Of(err)
		if got != tc.want || strings.Contains(got, "Go ") || strings.Contains(got, "jsonmsg.") {
			t.Errorf("%s: %q, want %q", tc.body, got, tc.want)
		}
	}
}
