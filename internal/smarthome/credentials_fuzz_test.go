package smarthome

import (
	"net/http"
	"testing"
)

// FuzzParseBasic holds parseBasic to http.Request.BasicAuth, whose parsing
// its comment says it is: the same login, password and verdict for any
// Authorization header.
func FuzzParseBasic(f *testing.F) {
	for _, s := range []string{"Basic YWdlbnQ6c2VjcmV0", "basic YWdlbnQ6c2VjcmV0", "BASIC YWdlbnQ6", "Basic YWdlbnQ=",
		"Basic ", "Basic", "Bearer x", "Basic  YWdlbnQ6c2VjcmV0", "Basic YWdlbnQ6c2VjcmV0 ", "Basic OnNlY3JldA=="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		login, password, ok := parseBasic(h)
		r := http.Request{Header: http.Header{"Authorization": {h}}}
		wl, wp, wok := r.BasicAuth()
		if ok != wok || ok && (login != wl || password != wp) {
			t.Fatalf("parseBasic(%q) = %q, %q, %v; BasicAuth: %q, %q, %v", h, login, password, ok, wl, wp, wok)
		}
	})
}
