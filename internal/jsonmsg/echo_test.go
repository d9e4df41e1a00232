package jsonmsg

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEcho(t *testing.T) {
	long := strings.Repeat("я", EchoRunes)
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", ""},
		{"short", "light", "light"},
		{"exactly the bound", long, long},
		{"one over", long + "x", long + EchoMarker},
		{"a MiB", strings.Repeat("a", 1<<20), strings.Repeat("a", EchoRunes) + EchoMarker},
		{"invalid byte", "a\xffb", "a\uFFFDb"},
		{"cut rune at the end", "ab\xd1", "ab\uFFFD"},
		{"invalid past the bound", long + "\xff", long + EchoMarker},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Echo(tc.in)
			if got != tc.want {
				t.Fatalf("Echo(%.40q…) = %.60q…, want %.60q…", tc.in, got, tc.want)
			}
			if !utf8.ValidString(got) || utf8.RuneCountInString(got) > EchoRunes+1 {
				t.Fatalf("Echo(%.40q…) = %q: invalid or too long", tc.in, got)
			}
		})
	}
}

// TestOfBoundsClientText holds Of to quoting at most EchoRunes characters
// of what the client sent: a member name DisallowUnknownFields names, and
// the string json.Number could not take, were quoted whole.
func TestOfBoundsClientText(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	for _, tc := range []struct {
		name string
		into any
		body string
		want string
	}{
		{"unknown member", &struct{ A int }{}, `{"` + long + `":1}`, `json: unknown field "` + strings.Repeat("x", EchoRunes) + EchoMarker + `"`},
		{"unknown member, short", &struct{ A int }{}, `{"b":1}`, `json: unknown field "b"`},
		{"number", &struct{ N json.Number }{}, `{"N":"` + long + `"}`, "json: invalid number literal, trying to unmarshal " + "\"\\\"" + strings.Repeat("x", EchoRunes-3) + EchoMarker + " into Number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dec := json.NewDecoder(strings.NewReader(tc.body))
			dec.DisallowUnknownFields()
			err := dec.Decode(tc.into)
			if err == nil {
				t.Fatal("decoded")
			}
			if got := Of(err); got != tc.want {
				t.Fatalf("Of = %.300q, want %.300q", got, tc.want)
			}
		})
	}
}
