package homeapi

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"partnerapi/internal/smarthome"
	"partnerapi/internal/smarthome/homesql"
	"partnerapi/internal/storetest"
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

// The ETag names the profile and the wire-format switches: each
// combination serves other bytes for one catalog version, so each has its
// own tag, and the default keeps the plain "catalog-<version>".
func TestETagNamesWireSwitches(t *testing.T) {
	ctx := context.Background()
	db := storetest.SQLite(t)
	if err := homesql.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	svc := smarthome.NewService(homesql.New(db))
	if err := svc.Init(ctx); err != nil {
		t.Fatal(err)
	}
	seen := map[string]Options{}
	for _, opt := range []Options{
		{}, {Profile: "2025-11"}, {OmitFalseRequired: true}, {HideAllowedValues: true},
		{Profile: "2025-11", OmitFalseRequired: true, HideAllowedValues: true},
	} {
		h := &handlers{svc: svc, opt: opt}
		s, err := h.render(httptest.NewRequest("GET", "/v1/mqtt-gate/models", nil))
		if err != nil {
			t.Fatal(err)
		}
		tag := s.etag[0]
		if other, dup := seen[tag]; dup {
			t.Errorf("options %+v and %+v share the ETag %s", opt, other, tag)
		}
		seen[tag] = opt
		if opt.variant() == "" && tag != `"catalog-1"` {
			t.Errorf("default ETag %s", tag)
		}
	}
}
