package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func testAPI(health func(context.Context) error) http.Handler {
	errs := func(w http.ResponseWriter, r *http.Request, status int, err error) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"envelope":%q}`, err.Error())
	}
	mux := NewMux("test", errs, NewMetrics("t"))
	mux.HandleFunc("GET", "/boom", func(w http.ResponseWriter, r *http.Request) { panic("kaboom") })
	mux.HandleFunc("POST", "/echo", func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if IsBodyTooLarge(err) {
			errs(w, r, 413, ErrBodyTooLarge)
			return
		}
		w.Write(b)
	})
	return API{Name: "test", Handler: mux, Errors: errs, Health: health, MaxBody: 16, OpenAPI: []byte("openapi: 3.1.0\n")}.
		Build(slog.New(slog.NewTextHandler(io.Discard, nil)), NewMetrics("t"))
}

func TestPlatform(t *testing.T) {
	healthy := true
	h := testAPI(func(context.Context) error {
		if !healthy {
			return errors.New("store closed")
		}
		return nil
	})
	cases := []struct {
		name, method, path, body string
		header                   map[string]string
		before                   func()
		status                   int
		contains                 string
	}{
		{"health ok", "GET", "/healthz", "", nil, nil, 200, `"ok"`},
		{"panic answers in envelope", "GET", "/boom", "", nil, nil, 500, `"envelope":"internal error"`},
		{"unknown route", "GET", "/nope", "", nil, nil, 404, `"envelope":"no such route"`},
		{"wrong method", "DELETE", "/echo", "", nil, nil, 405, `method not allowed`},
		// The platform's own GET routes answer other methods 405 in the
		// API's envelope too, not 404 as if the path were unknown.
		{"wrong method on health", "POST", "/healthz", "", nil, nil, 405, `method not allowed`},
		{"wrong method on the contract", "DELETE", "/openapi.yaml", "", nil, nil, 405, `method not allowed`},
		{"declared body too large", "POST", "/echo", strings.Repeat("x", 17), nil, nil, 413, `too large`},
		{"body within limit", "POST", "/echo", "hello", nil, nil, 200, "hello"},
		{"contract", "GET", "/openapi.yaml", "", nil, nil, 200, "openapi: 3.1.0"},
		{"health red when store goes away", "GET", "/healthz", "", nil, func() { healthy = false }, 503, "unavailable"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.before != nil {
				c.before()
			}
			req := httptest.NewRequest(c.method, c.path, strings.NewReader(c.body))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != c.status || !strings.Contains(rec.Body.String(), c.contains) {
				t.Fatalf("got %d %q, want %d containing %q", rec.Code, rec.Body.String(), c.status, c.contains)
			}
			if rec.Code == 405 && rec.Header().Get("Allow") == "" {
				t.Error("405 without Allow")
			}
			if id := rec.Header().Get("X-Request-Id"); len(id) != 36 {
				t.Errorf("generated request id %q is not a UUID", id)
			}
		})
	}
}

func TestRequestIDHonouredOrReplaced(t *testing.T) {
	h := testAPI(nil)
	for in, keep := range map[string]bool{"abc-123": true, "bad id with spaces": false, strings.Repeat("x", 200): false} {
		req := httptest.NewRequest("GET", "/healthz", nil)
		req.Header.Set("X-Request-Id", in)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if got := rec.Header().Get("X-Request-Id"); (got == in) != keep {
			t.Errorf("X-Request-Id %q echoed as %q, keep=%v", in, got, keep)
		}
	}
}

// MaxBodyPaths raises the cap for the paths it names only: the same body is
// taken on a named path and refused on any other, declared or chunked.
func TestMaxBodyPaths(t *testing.T) {
	echo := func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if IsBodyTooLarge(err) {
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			return
		}
		w.Write(b)
	}
	errs := func(w http.ResponseWriter, r *http.Request, status int, err error) { w.WriteHeader(status) }
	mux := NewMux("test", errs, nil)
	mux.HandleFunc("POST", "/upload", echo)
	mux.HandleFunc("POST", "/echo", echo)
	h := API{Name: "test", Handler: mux, Errors: errs, MaxBody: 16, MaxBodyPaths: map[string]int64{"/upload": 64}}.
		Build(slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	for _, tc := range []struct {
		path    string
		size    int
		chunked bool
		status  int
	}{
		{"/upload", 64, false, 200},
		{"/upload", 64, true, 200},
		{"/upload", 65, false, 413},
		{"/upload", 65, true, 413},
		{"/echo", 17, false, 413},
		{"/echo", 17, true, 413},
		{"/echo", 16, false, 200},
	} {
		req := httptest.NewRequest("POST", tc.path, strings.NewReader(strings.Repeat("x", tc.size)))
		if tc.chunked {
			req.ContentLength = -1
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tc.status {
			t.Errorf("%s %d bytes (chunked %v): %d, want %d", tc.path, tc.size, tc.chunked, rec.Code, tc.status)
		}
	}
}

// TestLiteralPathBeatsWildcard: a path a route names literally belongs to
// that route's pattern, as OpenAPI matches concrete paths before templated
// ones, so another method on it is 405 naming the literal path's methods,
// even where a wildcard route of that method matches the path.
func TestLiteralPathBeatsWildcard(t *testing.T) {
	errs := func(w http.ResponseWriter, r *http.Request, status int, err error) {
		w.WriteHeader(status)
		fmt.Fprint(w, err.Error())
	}
	mux := NewMux("test", errs, nil)
	ok := func(name string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, name, " ", r.PathValue("id")) }
	}
	mux.HandleFunc("POST", "/docs/confirm", ok("confirm"))
	mux.HandleFunc("GET", "/docs/{id}", ok("get"))
	mux.HandleFunc("GET", "/docs/list", ok("list"))
	for _, c := range []struct {
		method, path string
		status       int
		body, allow  string
	}{
		{"GET", "/docs/confirm", 405, "method not allowed", "POST"},
		{"HEAD", "/docs/confirm", 405, "method not allowed", "POST"},
		{"POST", "/docs/confirm", 200, "confirm ", ""},
		{"GET", "/docs/42", 200, "get 42", ""},
		{"GET", "/docs/list", 200, "list ", ""},
		{"HEAD", "/docs/list", 200, "list ", ""},
		{"DELETE", "/docs/42", 405, "method not allowed", "GET"},
	} {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(c.method, c.path, nil))
		if rec.Code != c.status || rec.Body.String() != c.body || rec.Header().Get("Allow") != c.allow {
			t.Errorf("%s %s: %d %q Allow %q, want %d %q Allow %q", c.method, c.path, rec.Code, rec.Body.String(),
				rec.Header().Get("Allow"), c.status, c.body, c.allow)
		}
	}
}
