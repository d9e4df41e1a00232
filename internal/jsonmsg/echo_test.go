package jsonmsg

import (
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
