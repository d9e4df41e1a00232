package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzRequestID holds X-Request-Id acceptance to what a log line and a
// response header can carry: the id a request is given and echoes is
// never empty, never longer than 128 bytes, valid UTF-8 with no control,
// space or non-ASCII character (so no header splitting and no log
// forging), and it is the client's own exactly when the client's is such
// an id; otherwise it is a made UUID.
func FuzzRequestID(f *testing.F) {
	for _, s := range []string{"", "a", "3fa85f64-5717-4562-b3fc-2c963f66afa6", "req 1", "x\r\nSet-Cookie: a=b", "\x00",
		"ид", "\u2028", "\x7f", strings.Repeat("x", 128), strings.Repeat("x", 129), "\xff", "a\tb", "~!@#$%^&*()"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sent string) {
		var seen string
		h := withRequestID(nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen = RequestID(r.Context()) }))
		r := httptest.NewRequest("GET", "/", nil)
		r.Header["X-Request-Id"] = []string{sent}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		got := w.Header().Values("X-Request-Id")
		if len(got) != 1 || got[0] != seen {
			t.Fatalf("sent %q: echoed %q, handler saw %q", sent, got, seen)
		}
		id := got[0]
		if id == "" || len(id) > 128 || !utf8.ValidString(id) {
			t.Fatalf("sent %q: id %q", sent, id)
		}
		for _, c := range id {
			if unicode.IsControl(c) || unicode.IsSpace(c) || c > unicode.MaxASCII {
				t.Fatalf("sent %q: id %q carries %U", sent, id, c)
			}
		}
		own := sent != "" && len(sent) <= 128
		for i := 0; i < len(sent); i++ {
			own = own && sent[i] > ' ' && sent[i] < 0x7f
		}
		if own != (id == sent) {
			t.Fatalf("sent %q: id %q (own id expected: %v)", sent, id, own)
		}
		if !own && !uuidShape(id) {
			t.Fatalf("sent %q: made id %q is not a UUID", sent, id)
		}
	})
}

func uuidShape(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if s[i] != '-' {
				return false
			}
		} else if !strings.ContainsRune("0123456789abcdef", rune(s[i])) {
			return false
		}
	}
	return true
}
