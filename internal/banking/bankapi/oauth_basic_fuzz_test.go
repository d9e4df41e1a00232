package bankapi

import (
	"net/http"
	"strings"
	"testing"
)

// FuzzBasicAuth holds basicAuth to http.Request.BasicAuth, whose parsing
// its comment says it is: the same client, secret and verdict for any
// Authorization header, once the spaces after the scheme, which BasicAuth
// wants exactly one of, are one.
func FuzzBasicAuth(f *testing.F) {
	for _, s := range []string{"Basic YWdlbnQ6c2VjcmV0", "basic YWdlbnQ6c2VjcmV0", "Basic   YWdlbnQ6", "Basic YWdlbnQ=",
		"Basic ", "Basic", "Bearer x", "Basic\tYWdlbnQ6c2VjcmV0", "Basic YWdlbnQ6c2VjcmV0 ", "Basic OnNlY3JldA=="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		user, pass, ok := basicAuth(h)
		norm := h
		if len(h) > len("Basic ") && strings.EqualFold(h[:len("Basic ")], "Basic ") {
			norm = h[:len("Basic ")] + strings.TrimLeft(h[len("Basic "):], " ")
		}
		r := http.Request{Header: http.Header{"Authorization": {norm}}}
		wu, wp, wok := r.BasicAuth()
		if ok != wok || ok && (user != wu || pass != wp) {
			t.Fatalf("basicAuth(%q) = %q, %q, %v; BasicAuth: %q, %q, %v", h, user, pass, ok, wu, wp, wok)
		}
	})
}
