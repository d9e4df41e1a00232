package web

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestFastRoutesAgreeWithServeMux answers many requests through a Mux with
// its fast path and through one that only uses the ServeMux, and expects
// the same answers: status, handler, pattern, path values and headers.
func TestFastRoutesAgreeWithServeMux(t *testing.T) {
	patterns := []struct{ method, pattern string }{
		{"GET", "/v1/mqtt-gate/categories"},
		{"GET", "/v1/mqtt-gate/categories/{category}/features"},
		{"GET", "/v1/mqtt-gate/models"},
		{"POST", "/v1/mqtt-gate/validate"},
		{"GET", "/v1/admin/models/{id}"},
		{"PUT", "/v1/admin/models/{id}"},
		{"DELETE", "/v1/admin/models/{id}"},
		{"POST", "/v1/admin/agents/{login}/password"},
		{"DELETE", "/v1/admin/agents/{login}"},
		{"GET", "/amb/{x}/c"},
		{"GET", "/amb/b/c"},
	}
	build := func(fast bool) *Mux {
		errs := func(w http.ResponseWriter, r *http.Request, status int, err error) {
			w.WriteHeader(status)
			fmt.Fprintf(w, "envelope %v", err)
		}
		m := NewMux("test", errs, NewMetrics("t"))
		m.fast.disabled = !fast
		for _, p := range patterns {
			m.HandleFunc(p.method, p.pattern, func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprintf(w, "%s|%s|%s|%s|%s|%s|%s", r.Pattern, r.PathValue("category"), r.PathValue("id"),
					r.PathValue("login"), r.PathValue("x"), r.PathValue("y"), r.URL.Path)
			})
		}
		return m
	}
	fast, slow := build(true), build(false)
	if fast.fast.disabled {
		t.Fatal("the fast path is off for simple patterns")
	}
	paths := []string{
		"/v1/mqtt-gate/categories", "/v1/mqtt-gate/categories/", "/v1/mqtt-gate/categories/light/features",
		"/v1/mqtt-gate/categories/light/features/", "/v1/mqtt-gate/categories//features", "/v1/mqtt-gate/categories/a%20b/features",
		"/v1/mqtt-gate/categories/a%2Fb/features", "/v1/mqtt-gate/categories/%6Cight/features", "/v1/mqtt-gate/categories/./features",
		"/v1/mqtt-gate/categories/../models", "/v1/mqtt-gate/models", "/v1/mqtt-gate/validate", "/v1/admin/models/x",
		"/v1/admin/models/x/y", "/v1/admin/models", "/v1/admin/agents/bob/password", "/v1/admin/agents/bob", "/v1/admin/agents/.hidden",
		"/amb/a/c", "/amb/b/c", "/amb/b/b", "/", "/nope", "/v1//mqtt-gate/models", "/v1/mqtt-gate/categories/light/features?x=1",
		"/V1/mqtt-gate/models", "/v1/mqtt-gate/categories/light/features/extra",
	}
	for _, method := range []string{"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH"} {
		for _, p := range paths {
			answer := func(m *Mux) string {
				req := httptest.NewRequest(method, "http://x"+p, nil)
				rec := httptest.NewRecorder()
				m.ServeHTTP(rec, req)
				return fmt.Sprintf("%d %q Allow=%q Location=%q", rec.Code, rec.Body.String(), rec.Header().Get("Allow"), rec.Header().Get("Location"))
			}
			if a, b := answer(fast), answer(slow); a != b {
				t.Errorf("%s %s:\nfast %s\nmux  %s", method, p, a, b)
			}
		}
	}
	// The fast path really serves the common requests.
	req := httptest.NewRequest("GET", "/v1/mqtt-gate/categories/light/features", nil)
	if rt := fast.fast.match(req); rt == nil || !strings.HasSuffix(rt.pattern, "/features") {
		t.Errorf("fast match: %+v", rt)
	}
	// Where two patterns match, precedence is the ServeMux's to decide.
	req = httptest.NewRequest("GET", "/amb/b/c", nil)
	if rt := fast.fast.match(req); rt != nil {
		t.Errorf("a path two patterns match was taken by the fast path: %s", rt.pattern)
	}
}

// TestFastRoutesOffForComplexPatterns checks that a pattern whose
// precedence the fast path does not model turns it off.
func TestFastRoutesOffForComplexPatterns(t *testing.T) {
	for _, p := range []string{"/files/{path...}", "/dir/", "/exact/{$}", "/a/x{y}", "example.com/a"} {
		var f fastRoutes
		f.add("GET", "/plain", http.NotFoundHandler())
		f.add("GET", p, http.NotFoundHandler())
		if !f.disabled {
			t.Errorf("%s left the fast path on", p)
		}
	}
}
