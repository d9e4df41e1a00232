package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"
	"time"
)

// TestUUIDs checks both generators produce distinct version 4 UUIDs in the
// canonical lower-case form.
func TestUUIDs(t *testing.T) {
	form := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	for name, gen := range map[string]func() string{"NewUUID": NewUUID, "newRequestID": func() string { return new(requestState).newRequestID() }} {
		seen := map[string]bool{}
		for range 1000 {
			id := gen()
			if !form.MatchString(id) {
				t.Fatalf("%s: %q is not a version 4 UUID", name, id)
			}
			if seen[id] {
				t.Fatalf("%s: %q repeated", name, id)
			}
			seen[id] = true
		}
	}
}

// OwnRequestID finds the platform's id and whether the platform made it
// under contexts that inner layers derive from the request's, so errors
// answered there (with the id as their referenceId) still match the access
// log's line.
func TestOwnRequestIDUnderDerivedContexts(t *testing.T) {
	type key struct{}
	for _, tc := range []struct {
		name, header string
		derive       func(*testing.T, context.Context) context.Context
		wantMade     bool
	}{
		{"platform's own context", "", func(_ *testing.T, c context.Context) context.Context { return c }, true},
		{"a value added", "", func(_ *testing.T, c context.Context) context.Context { return context.WithValue(c, key{}, 1) }, true},
		{"a deadline and a value", "", func(t *testing.T, c context.Context) context.Context {
			c, cancel := context.WithTimeout(context.WithValue(c, key{}, 1), time.Hour)
			t.Cleanup(cancel)
			return c
		}, true},
		{"the client's id", "3f2504e0-4f89-41d3-9a0c-0305e82c3301", func(_ *testing.T, c context.Context) context.Context {
			return context.WithValue(c, key{}, 1)
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var id string
			var made bool
			h := withRequestID(nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				id, made = OwnRequestID(tc.derive(t, r.Context()))
			}))
			rec := httptest.NewRecorder()
			req := httptest.NewRequest("GET", "/", nil)
			if tc.header != "" {
				req.Header.Set("X-Request-Id", tc.header)
			}
			h.ServeHTTP(rec, req)
			if got := rec.Header().Get("X-Request-Id"); id != got || made != tc.wantMade {
				t.Fatalf("OwnRequestID %q %v, header %q, want made %v", id, made, got, tc.wantMade)
			}
		})
	}
}
