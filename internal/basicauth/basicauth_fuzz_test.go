package basicauth

import (
	"net/http"
	"strings"
	"testing"
)

// FuzzParse holds Parse to http.Request.BasicAuth, whose parsing its
// comment says it is: the same user, password and verdict for any
// Authorization header, once the spaces after the scheme, which BasicAuth
// wants exactly one of, are one.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"Basic YWdlbnQ6c2VjcmV0", "basic YWdlbnQ6c2VjcmV0", "BASIC YWdlbnQ6", "Basic YWdlbnQ=",
		"Basic ", "Basic", "Bearer x", "Basic  YWdlbnQ6c2VjcmV0", "Basic   YWdlbnQ6", "Basic\tYWdlbnQ6c2VjcmV0",
		"Basic YWdlbnQ6c2VjcmV0 ", "Basic OnNlY3JldA=="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		user, password, ok := Parse(h)
		norm := h
		if len(h) > len("Basic ") && strings.EqualFold(h[:len("Basic ")], "Basic ") {
			norm = h[:len("Basic ")] + strings.TrimLeft(h[len("Basic "):], " ")
		}
		r := http.Request{Header: http.Header{"Authorization": {norm}}}
		wu, wp, wok := r.BasicAuth()
		if ok != wok || ok && (user != wu || password != wp) {
			t.Fatalf("Parse(%q) = %q, %q, %v; BasicAuth: %q, %q, %v", h, user, password, ok, wu, wp, wok)
		}
	})
}
