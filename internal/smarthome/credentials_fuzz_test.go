package smarthome

import (
	"net/http"
	"strings"
	"testing"
)

// FuzzParseBasic holds parseBasic to http.Request.BasicAuth, whose parsing
// its comment says it is: the same login, password and verdict for any
// Authorization header, once the spaces after the scheme, which
// BasicAuth wants exactly one of, are one.
func FuzzParseBasic(f *testing.F) {
	for _, s := range []string{"Basic YWdlbnQ6c2VjcmV0", "basic YWdlbnQ6c2VjcmV0", "BASIC YWdlbnQ6", "Basic YWdlbnQ=",
		"Basic ", "Basic", "Bearer x", "Basic  YWdlbnQ6c2VjcmV0", "Basic YWdlbnQ6c2VjcmV0 ", "Basic OnNlY3JldA=="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		login, password, ok := parseBasic(h)
		norm := h
		if len(h) > len("Basic ") && strings.EqualFold(h[:len("Basic ")], "Basic ") {
			norm = h[:len("Basic ")] + strings.TrimLeft(h[len("Basic "):], " ")
		}
		r := http.Request{Header: http.Header{"Authorization": {norm}}}
		wl, wp, wok := r.BasicAuth()
		if ok != wok || ok && (login != wl || password != wp) {
			t.Fatalf("parseBasic(%q) = %q, %q, %v; BasicAuth: %q, %q, %v", h, login, password, ok, wl, wp, wok)
		}
	})
}
