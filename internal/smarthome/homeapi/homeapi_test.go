package homeapi

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"partnerapi/internal/smarthome"
	"partnerapi/internal/smarthome/homesql"
	"partnerapi/internal/storetest"
	"partnerapi/internal/testenv"
	"partnerapi/internal/web"
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
		// Dot segments are resolved here too: left in, the platform's
		// ServeMux would answer them with a redirect in HTML (§8.2).
		"/v1/mqtt-gate/./categories":                 "/v1/mqtt-gate/categories",
		"/./v1/mqtt-gate/categories":                 "/v1/mqtt-gate/categories",
		"/v1/mqtt-gate/categories/light/features/..": "/v1/mqtt-gate/categories/light",
		"/v1/../v1//mqtt-gate/models/.":              "/v1/mqtt-gate/models",
		"/..":                                        "/",
		"/v1/mqtt-gate/categories/.light/features":   "/v1/mqtt-gate/categories/.light/features",
	} {
		r := httptest.NewRequest("GET", "http://x"+in, nil)
		FoldSlashes(r)
		if r.URL.Path != want {
			t.Errorf("%q → %q, want %q", in, r.URL.Path, want)
		}
	}
}

// TestFoldSlashesKeepsEncodedSlashes pins that folding works on the path
// as sent: an encoded slash (%2F) is a character inside its segment, not a
// separator, so it stays encoded and only the literal "//" around it is
// folded; Path and RawPath stay one path (RawPath set only when the
// escaping is not Path's default). Encoded dots are dots (RFC 3986 §2.3:
// "." is unreserved), so %2E%2E is a dot segment as ".." is.
func TestFoldSlashesKeepsEncodedSlashes(t *testing.T) {
	for _, tc := range []struct{ in, path, escaped string }{
		{"/a%2Fb//c", "/a/b/c", "/a%2Fb/c"},
		{"/v1/mqtt-gate/categories/light%2Ffeatures/", "/v1/mqtt-gate/categories/light/features", "/v1/mqtt-gate/categories/light%2Ffeatures"},
		{"//v1/mqtt-gate/categories/a%2F..", "/v1/mqtt-gate/categories/a/..", "/v1/mqtt-gate/categories/a%2F.."},
		{"/a%2F/b", "/a//b", "/a%2F/b"},     // clean as sent: left alone
		{"/a%2F%2Fb", "/a//b", "/a%2F%2Fb"}, // likewise
		{"/a/%2E%2E/b%2Fc/", "/b/c", "/b%2Fc"},
		{"/a/%2e/b//", "/a/b", "/a/b"},
		{"/a%41//b", "/aA/b", "/a%41/b"}, // another encoding kept as sent
		{"/a%20b//c", "/a b/c", "/a%20b/c"},
	} {
		r := httptest.NewRequest("GET", "http://x"+tc.in, nil)
		FoldSlashes(r)
		if r.URL.Path != tc.path || r.URL.EscapedPath() != tc.escaped {
			t.Errorf("%q → path %q escaped %q (raw %q), want %q and %q", tc.in, r.URL.Path, r.URL.EscapedPath(), r.URL.RawPath, tc.path, tc.escaped)
		}
		if u, err := url.Parse(r.URL.EscapedPath()); err != nil || u.Path != r.URL.Path {
			t.Errorf("%q: escaped path %q does not decode to path %q", tc.in, r.URL.EscapedPath(), r.URL.Path)
		}
	}
}

// Reference §8.1 and §8.2: agents build their URLs by concatenation and
// read every answer as JSON, so a path that is not clean (doubled or
// trailing slashes, dot segments) is routed as its clean form, never
// answered with the router's redirect page. Sent without credentials, a
// path that reaches its route is the route's 401 in the Common error.
func TestUncleanPathsAreRouted(t *testing.T) {
	svc := newTestService(t)
	api := web.API{Name: "smarthome", Handler: NewServer(Deps{Service: svc, Log: slog.New(slog.DiscardHandler)}),
		Errors: ErrorWriter(), Prepare: FoldSlashes}
	srv := httptest.NewServer(api.Build(slog.New(slog.DiscardHandler), nil))
	t.Cleanup(srv.Close)
	for _, p := range []string{
		"//v1/mqtt-gate/categories", "/v1/mqtt-gate/categories/", "/v1/mqtt-gate/./categories",
		"/./v1/mqtt-gate/models", "/v1/mqtt-gate/categories/light/features/../features", "/v1/x/../mqtt-gate/models/.",
	} {
		req, _ := http.NewRequest("GET", srv.URL+p, nil)
		resp, err := http.DefaultTransport.RoundTrip(req) // redirects are answers here, not followed
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if want := `{"code":401,"message":"Unauthorized","details":[]}` + "\n"; resp.StatusCode != 401 || string(body) != want {
			t.Errorf("%s: %d %q (Location %q), want the route's 401 %q", p, resp.StatusCode, body, resp.Header.Get("Location"), want)
		}
	}
}

// FuzzMatchETag holds matchETag to referenceMatchETag, a second reading of
// RFC 9110's If-None-Match grammar that splits on the quotes instead of
// scanning, for our own strong tags and for any other valid one.
func FuzzMatchETag(f *testing.F) {
	f.Add(`W/"catalog-1", "x"`, `"catalog-1"`)
	f.Add(`"catalog-1"`, `"catalog-1"`)
	f.Add(`*`, `"catalog-1"`)
	f.Add(` , ,"a" ,W/"catalog-1",`, `"catalog-1"`)
	f.Add(`"x,y", "catalog-1"`, `"catalog-1"`)
	// A comma inside a client's tag is legal; splitting the header on
	// commas once read the tag "a,*,b" as holding the wildcard.
	f.Add(`"a,*,b"`, `"catalog-1"`)
	f.Add(`"a,"catalog-1"`, `"catalog-1"`)
	f.Fuzz(func(t *testing.T, header, etag string) {
		if !validEntityTag(etag) {
			return
		}
		if got, want := matchETag(header, etag), referenceMatchETag(header, etag); got != want {
			t.Fatalf("matchETag(%q, %q) = %v, the reference says %v", header, etag, got, want)
		}
	})
}

// referenceMatchETag is If-None-Match's weak comparison written from the
// grammar: "*" alone, or a list of entity-tags with empty elements allowed.
// A value that is not valid matches nothing, so the body is served. An
// entity-tag's opaque part holds no DQUOTE, so splitting on the quotes
// leaves the tags at the odd pieces and the separators at the even ones.
func referenceMatchETag(header, etag string) bool {
	if strings.Trim(header, " \t") == "*" {
		return true
	}
	pieces := strings.Split(header, `"`)
	if len(pieces)%2 == 0 {
		return false
	}
	matched := false
	for i, p := range pieces {
		if i%2 == 1 {
			for j := 0; j < len(p); j++ {
				if !refETagc(p[j]) {
					return false
				}
			}
			if `"`+p+`"` == strings.TrimPrefix(etag, "W/") {
				matched = true
			}
			continue
		}
		sep := p
		if i < len(pieces)-1 {
			// The next tag may be weak; its W/ belongs to this piece.
			sep = strings.TrimSuffix(p, "W/")
		}
		if strings.Trim(sep, " \t,") != "" {
			return false
		}
		// Between two tags there must be a comma.
		if i > 0 && i < len(pieces)-1 && !strings.Contains(sep, ",") {
			return false
		}
	}
	return matched
}

func refETagc(c byte) bool { return c == 0x21 || c >= 0x23 && c <= 0x7e || c >= 0x80 }

// validEntityTag says whether s is one entity-tag, as a server's ETag is.
func validEntityTag(s string) bool {
	s = strings.TrimPrefix(s, "W/")
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if !refETagc(s[i]) {
			return false
		}
	}
	return true
}

// A server built without a Commander answers a sound command 404 naming
// the flag that turns the gate on (the route's admin check runs before, in
// routes); a request that is no command is the client's fault, 400, gate or
// none.
func TestCommandWithoutGate(t *testing.T) {
	h := &handlers{}
	for _, c := range []struct {
		login, body string
		status      int
		says        string
	}{
		{"a", `{"devices":{}}`, 404, "--smarthome-mqtt"},
		{"a", `{"devices":`, 400, "devices"},
		{"a", `[1,2]`, 400, "devices"},
		{"a", `{"devices":"on"}`, 400, "devices"},
		{"a", ``, 400, "devices"},
		{"no such/agent", `{"devices":{}}`, 400, "login"},
	} {
		w := httptest.NewRecorder()
		r := httptest.NewRequest("POST", "/v1/admin/agents/x/commands", strings.NewReader(c.body))
		r.SetPathValue("login", c.login)
		h.command(w, r)
		if w.Code != c.status || !strings.Contains(w.Body.String(), c.says) {
			t.Errorf("%q %q: %d %s, want %d naming %s", c.login, c.body, w.Code, w.Body.String(), c.status, c.says)
		}
	}
}

// The ETag names the profile and the wire-format switches: each
// combination serves other bytes for one catalog version, so each has its
// own tag, and the default keeps the plain "catalog-<version>".
func TestETagNamesWireSwitches(t *testing.T) {
	svc := newTestService(t)
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

// An unexpected error is answered with the reference's own sample of the
// Common error (§3), byte for byte, in JSON UTF-8: its cause goes to the
// error log with the request, never to the client.
func TestInternalErrorIsTheReferenceSample(t *testing.T) {
	var logs testenv.LogBuffer
	h := &handlers{log: slog.New(slog.NewTextHandler(&logs, nil))}
	w := httptest.NewRecorder()
	h.domainError(w, httptest.NewRequest("GET", "/v1/mqtt-gate/models", nil), errors.New("disk on fire"))
	if want := `{"code":500,"message":"Internal server error","details":[]}` + "\n"; w.Code != 500 || w.Body.String() != want {
		t.Errorf("%d %q, want 500 %q", w.Code, w.Body.String(), want)
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	if !strings.Contains(logs.String(), "level=ERROR") || !strings.Contains(logs.String(), "disk on fire") {
		t.Errorf("the cause is not in the error log:\n%s", logs.String())
	}
}

// A version number past the seed does not name one content alone: a restored
// backup counts its versions again from where it stands, so its next change
// reaches a number the lost timeline gave other models. The ETag tells the
// two apart by when each was made, so an agent holding the lost one's tag
// gets the new catalog, not a 304; the seed keeps the plain tag.
func TestETagOutlivesARestoredVersion(t *testing.T) {
	ctx := context.Background()
	db := storetest.SQLite(t)
	if err := homesql.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	tagOf := func() string {
		t.Helper()
		svc := smarthome.NewService(homesql.New(db))
		if err := svc.Init(ctx); err != nil {
			t.Fatal(err)
		}
		s, err := (&handlers{svc: svc}).render(httptest.NewRequest("GET", "/v1/mqtt-gate/models", nil))
		if err != nil {
			t.Fatal(err)
		}
		return s.etag[0]
	}
	if tag := tagOf(); tag != `"catalog-1"` {
		t.Fatalf("seed ETag %s", tag)
	}
	svc := smarthome.NewService(homesql.New(db))
	if err := svc.Init(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.PutModel(ctx, smarthome.Model{ID: "lost", Manufacturer: "A", Model: "B", Category: "socket", Features: []string{"online", "on_off"}}); err != nil {
		t.Fatal(err)
	}
	lost := tagOf()
	// The restored timeline reached version 2 with other content, an hour
	// apart: the same number, made at another time.
	if _, err := db.W.ExecContext(ctx, `UPDATE home_catalog SET updated_at = updated_at - 3600 WHERE id = 1`); err != nil {
		t.Fatal(err)
	}
	if restored := tagOf(); restored == lost || !strings.HasPrefix(restored, `"catalog-2.`) {
		t.Errorf("version 2 made at two times: ETags %s and %s, want two tags of version 2", lost, restored)
	}
}
