package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRoutingAnswers pins what the platform answers for paths at the edge
// of routing (platform routes with other methods, unclean paths, HEAD on a
// GET route), so that shortcuts in dispatching cannot change them.
func TestRoutingAnswers(t *testing.T) {
	h := testAPI(nil)
	for _, tc := range []struct {
		method, path string
		status       int
		contains     string
		location     string
	}{
		// The platform serves /healthz for GET alone: another method is
		// a wrong method on a known path (RFC 9110 §15.5.6), not 404.
		{"POST", "/healthz", 405, `"envelope":"method not allowed"`, ""},
		{"HEAD", "/healthz", 200, "", ""},
		{"GET", "/metrics", 200, "partnerapi_http_in_flight_requests", ""},
		{"POST", "/metrics", 405, `"envelope":"method not allowed"`, ""},
		{"DELETE", "/metrics", 405, `"envelope":"method not allowed"`, ""},
		{"GET", "/healthz/", 404, `"envelope":"no such route"`, ""},
		{"GET", "/x/../healthz", 307, "", "/healthz"},
		{"POST", "/a/./echo", 307, "", "/a/echo"},
		{"POST", "/x/../echo", 307, "", "/echo"},
		{"GET", "/x/../nope", 307, "", "/nope"},
		{"GET", "/echo", 405, `"envelope":"method not allowed"`, ""},
		{"POST", "/echo/", 404, `"envelope":"no such route"`, ""},
		{"HEAD", "/boom", 500, "", ""},
	} {
		req := httptest.NewRequest(tc.method, "http://x"+tc.path, nil)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.contains) || rec.Header().Get("Location") != tc.location {
			t.Errorf("%s %s: %d %q (Location %q), want %d containing %q (Location %q)", tc.method, tc.path,
				rec.Code, rec.Body.String(), rec.Header().Get("Location"), tc.status, tc.contains, tc.location)
		}
	}
	// A request target that is no path answers in the API's envelope,
	// not as the top-level mux would (a bare 400, text/plain 404).
	for _, tc := range []struct{ method, target string }{{"GET", "*"}, {"POST", "*"}, {"CONNECT", "example.com:443"}} {
		req := httptest.NewRequest(tc.method, tc.target, nil)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if want := `{"envelope":"malformed request: request target is not a path"}`; rec.Code != 400 || rec.Body.String() != want {
			t.Errorf("%s %s: %d %q, want 400 %q", tc.method, tc.target, rec.Code, rec.Body.String(), want)
		}
	}
	// A wrong method lists the allowed ones.
	req := httptest.NewRequest("GET", "/echo", nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if got := rec.Header().Get("Allow"); got != http.MethodPost {
		t.Errorf("Allow %q", got)
	}
}

// TestIsCleanPath checks the shortcut agrees with cleanPath on paths at
// the edges of cleaning.
func TestIsCleanPath(t *testing.T) {
	for _, p := range []string{"", "/", "//", "/a", "/a/", "/a//b", "/a/./b", "/a/../b", "/a/.", "/a/..", "/.", "/..", "/.well-known/x",
		"/a/b.", "/a/b..", "/a.b/c", "a/b", "/a/b/", "/fintech/api/v1/payments", "/a/b//", "/a/.../b", "/%2e%2e/x"} {
		if got, want := isCleanPath(p), cleanPath(p) == p; got != want {
			t.Errorf("isCleanPath(%q) = %v, cleanPath says %v", p, got, want)
		}
	}
}
