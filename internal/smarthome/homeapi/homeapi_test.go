package homeapi

import (
	"net/http/httptest"
	"strings"
	"testing"
)

func TestMatchETag(t *testing.T) {
	for _, tc := range []struct {
		header string
		want   bool
	}{
		{`"catalog-3"`, true},
		{`W/"catalog-3"`, true},
		{`"a", "catalog-3"`, true},
		{`*`, true},
		{`"catalog-2"`, false},
		{``, false},
		{`catalog-3`, false},
	} {
		if got := matchETag(tc.header, `"catalog-3"`); got != tc.want {
			t.Errorf("matchETag(%q) = %v", tc.header, got)
		}
	}
}

func TestFoldSlashes(t *testing.T) {
	for in, want := range map[string]string{
		"//v1/mqtt-gate/categories":               "/v1/mqtt-gate/categories",
		"/v1//mqtt-gate///categories/":            "/v1/mqtt-gate/categories",
		"/v1/mqtt-gate/categories/":               "/v1/mqtt-gate/categories",
		"/v1/mqtt-gate/categories/light/features": "/v1/mqtt-gate/categories/light/features",
		"/":  "/",
		"//": "/",
	} {
		r := httptest.NewRequest("GET", "http://x"+in, nil)
		FoldSlashes(r)
		if r.URL.Path != want {
			t.Errorf("%q → %q, want %q", in, r.URL.Path, want)
		}
	}
}

func FuzzMatchETag(f *testing.F) {
	f.Add(`W/"catalog-1", "x"`)
	f.Fuzz(func(t *testing.T, h string) {
		if matchETag(h, `"catalog-1"`) && h == "" {
			t.Fatal("empty header matched")
		}
	})
}

// A server built without a Commander answers commands 503 naming the flag
// that turns the gate on (the route's admin check runs before, in routes).
func TestCommandWithoutGate(t *testing.T) {
	h := &handlers{}
	w := httptest.NewRecorder()
	h.command(w, httptest.NewRequest("POST", "/v1/admin/agents/a/commands", strings.NewReader(`{"devices":{}}`)))
	if w.Code != 503 || !strings.Contains(w.Body.String(), "--smarthome-mqtt") {
		t.Fatalf("%d %s", w.Code, w.Body.String())
	}
}
