package chatapi

import (
	"net/http/httptest"
	"strings"
	"testing"
	"unicode"
)

// FuzzSessionID holds X-Session-Id to what a header and a log line can
// carry: the response's id is one value of at most 128 printable ASCII
// bytes with no space, the client's own exactly when the client's is such
// a value, a made UUID otherwise, and one a handler already set is kept.
func FuzzSessionID(f *testing.F) {
	for _, s := range []string{"", "conversation-42", "3fa85f64-5717-4562-b3fc-2c963f66afa6", "a b", "x\r\nSet-Cookie: a=b",
		"\x00", "сессия", strings.Repeat("s", 128), strings.Repeat("s", 129), "\x7f", "\xc2\x85"} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, sent string, preset bool) {
		r := httptest.NewRequest("POST", "/api/v1/chat/completions", nil)
		r.Header["X-Session-Id"] = []string{sent}
		w := httptest.NewRecorder()
		if preset {
			w.Header().Set("X-Session-Id", "kept")
		}
		setSessionID(w, r)
		got := w.Header().Values("X-Session-Id")
		if len(got) != 1 {
			t.Fatalf("sent %q: %q", sent, got)
		}
		id := got[0]
		if preset {
			if id != "kept" {
				t.Fatalf("sent %q: the handler's id became %q", sent, id)
			}
			return
		}
		if id == "" || len(id) > 128 {
			t.Fatalf("sent %q: id %q", sent, id)
		}
		for _, c := range id {
			if unicode.IsControl(c) || unicode.IsSpace(c) || c > unicode.MaxASCII {
				t.Fatalf("sent %q: id %q carries %U", sent, id, c)
			}
		}
		own := sent != "" && len(sent) <= 128 && strings.IndexFunc(sent, func(c rune) bool { return c <= ' ' || c >= 0x7f }) < 0
		if own != (id == sent) {
			t.Fatalf("sent %q: id %q (own id expected: %v)", sent, id, own)
		}
		if !own && (len(id) != 36 || strings.Count(id, "-") != 4) {
			t.Fatalf("sent %q: made id %q is not a UUID", sent, id)
		}
	})
}
