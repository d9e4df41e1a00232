package homemqtt

import (
	"strings"
	"testing"
)

// loggedName bounds and escapes a sender-chosen agent name, so that no
// name can end a log line and forge the next, and leaves a registered
// agent's name (smarthome.ValidLogin) as it is.
func TestLoggedName(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"ctl-01.home@x", "ctl-01.home@x"},
		{"x\ntime=2026-11-29T00:00:00Z level=ERROR msg=forged", `x\ntime=2026-11-29T00:00:00Z level=ERROR msg=forged`},
		{"a\rb\x1b[31mc\x00", `a\rb\x1b[31mc\x00`},
		{"evil\u202egnp.exe", `evil\u202egnp.exe`},
		{"bad\xffutf8", `bad\xffutf8`},
		{strings.Repeat("a", 65), strings.Repeat("a", 64) + "...(65 bytes)"},
		// Cut on a character boundary: the 64th byte is inside "я".
		{strings.Repeat("a", 63) + "яя", strings.Repeat("a", 63) + "...(67 bytes)"},
	} {
		if got := loggedName(tc.name); got != tc.want {
			t.Errorf("loggedName(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}
