package web

import (
	"bufio"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// fuzzRoutePatterns mix the shapes the three APIs register: literals,
// one or two wildcards, a literal beside a wildcard of the same shape
// (OpenAPI's concrete-before-templated rule), and methods that share a
// path.
var fuzzRoutePatterns = []struct{ method, pattern string }{
	{"GET", "/v1/mqtt-gate/categories"},
	{"GET", "/v1/mqtt-gate/categories/{category}/features"},
	{"POST", "/v1/mqtt-gate/validate"},
	{"GET", "/v1/admin/models/{id}"},
	{"PUT", "/v1/admin/models/{id}"},
	{"DELETE", "/v1/admin/models/{id}"},
	{"POST", "/v1/admin/agents/{login}/password"},
	{"GET", "/fintech/api/v1/payments/{externalId}"},
	{"POST", "/fintech/api/v1/payments/qr-confirmation"},
	{"GET", "/fintech/api/v1/cards/{id}/limits/{x}"},
	{"GET", "/amb/{x}/c"},
	{"GET", "/amb/b/c"},
	{"GET", "/a"},
}

// FuzzFastRoutes holds the Mux's fast path to the http.ServeMux it stands
// in for: a request read off the wire the way the server reads it gets the
// same status, handler, pattern, path values, path and headers from a Mux
// with the fast path as from one without. extra is one more pattern,
// registered in both when the ServeMux takes it.
func FuzzFastRoutes(f *testing.F) {
	for _, s := range []string{
		"/v1/mqtt-gate/categories/light/features", "/v1/mqtt-gate/categories/a%2Fb/features", "/v1/admin/models/x",
		"/v1/admin/models/%78", "/amb/b/c", "/amb/a/c", "/fintech/api/v1/payments/qr-confirmation", "/a/", "/a/.",
		"/v1/admin/models/x?y=1", "//a", "/v1/admin/models/x/../y", "*", "http://h/a", "/a%00", "/v1/admin/models/%2e%2e",
	} {
		f.Add("GET", s, "")
		f.Add("POST", s, "/fintech/api/v1/payments/{id}")
	}
	f.Add("DELETE", "/v1/admin/models/a.b", "/v1/admin/{kind}/{id}")
	f.Add("GET", "/x/y", "/x/{$}")
	f.Fuzz(func(t *testing.T, method, target, extra string) {
		fast, slow := fuzzRouteMux(true, extra), fuzzRouteMux(false, extra)
		if fast == nil || slow == nil {
			if (fast == nil) != (slow == nil) {
				t.Fatalf("pattern %q registers in one Mux only", extra)
			}
			return
		}
		raw := method + " " + target + " HTTP/1.1\r\nHost: x\r\n\r\n"
		answer := func(m *Mux) string {
			req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
			if err != nil {
				return "unread"
			}
			rec := httptest.NewRecorder()
			m.ServeHTTP(rec, req)
			return fmt.Sprintf("%d %q Allow=%q Location=%q", rec.Code, rec.Body.String(), rec.Header().Get("Allow"), rec.Header().Get("Location"))
		}
		if a, b := answer(fast), answer(slow); a != b {
			t.Fatalf("%q with extra pattern %q:\nfast %s\nmux  %s", raw, extra, a, b)
		}
	})
}

// fuzzRouteMux builds the Mux of fuzzRoutePatterns and GET extra, nil when
// the ServeMux refuses extra (it panics on a malformed or conflicting
// pattern).
func fuzzRouteMux(fast bool, extra string) (m *Mux) {
	errs := func(w http.ResponseWriter, r *http.Request, status int, err error) {
		w.WriteHeader(status)
		fmt.Fprintf(w, "envelope %v", err)
	}
	m = NewMux("test", errs, nil)
	m.fast.disabled = !fast
	handler := func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s|%s|%s|%s|%s|%s|%s|%s|%s|%s", r.Pattern, r.PathValue("category"), r.PathValue("id"),
			r.PathValue("login"), r.PathValue("x"), r.PathValue("externalId"), r.PathValue("kind"), r.URL.Path, r.URL.RawPath, r.URL.RawQuery)
	}
	for _, p := range fuzzRoutePatterns {
		m.HandleFunc(p.method, p.pattern, handler)
	}
	if extra != "" {
		defer func() {
			if recover() != nil {
				m = nil
			}
		}()
		m.HandleFunc("GET", extra, handler)
	}
	if !fast {
		m.fast.disabled = true
	}
	return m
}
