package web

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A listener built with trusted proxies hands handlers (ClientIP) and its
// access log the forwarded client's address for a request that came
// through one, and the peer's for any other; a handler served outside the
// platform sees its peer.
func TestClientIPThroughPlatform(t *testing.T) {
	proxies, err := ParseTrustedProxies("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"platform-text", "json"} {
		t.Run(format, func(t *testing.T) {
			var logs bytes.Buffer
			h := NewTextHandler(&logs, nil)
			if format == "json" {
				h = slog.NewJSONHandler(&logs, nil)
			}
			errs := func(w http.ResponseWriter, r *http.Request, status int, err error) { w.WriteHeader(status) }
			mux := NewMux("bank", errs, nil)
			mux.HandleFunc("GET", "/who", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, ClientIP(r)) })
			built := API{Name: "bank", Handler: mux, Errors: errs}.BuildOn(Platform{Log: slog.New(h), TrustedProxies: proxies})
			for _, tc := range []struct {
				peer, xff, want, logged string
			}{
				{"127.0.0.1:5000", "6.6.6.6, 198.51.100.1", "198.51.100.1", "198.51.100.1"},
				{"203.0.113.5:6000", "198.51.100.1", "203.0.113.5", "203.0.113.5:6000"},
			} {
				logs.Reset()
				req := httptest.NewRequest("GET", "/who", nil)
				req.RemoteAddr = tc.peer
				req.Header.Set("X-Forwarded-For", tc.xff)
				rec := httptest.NewRecorder()
				built.ServeHTTP(rec, req)
				if rec.Body.String() != tc.want {
					t.Errorf("peer %s: ClientIP = %q, want %q", tc.peer, rec.Body.String(), tc.want)
				}
				want := fmt.Sprintf("remote=%s\n", tc.logged)
				if format == "json" {
					want = fmt.Sprintf(`"remote":%q`, tc.logged)
				}
				if !strings.Contains(logs.String(), want) {
					t.Errorf("peer %s: access line %q lacks %s", tc.peer, logs.String(), want)
				}
			}
		})
	}
	// The same handler without the platform: no proxies are known.
	req := httptest.NewRequest("GET", "/", nil)
	req.RemoteAddr = "127.0.0.1:5000"
	req.Header.Set("X-Forwarded-For", "198.51.100.1")
	if got := ClientIP(req); got != "127.0.0.1" {
		t.Errorf("ClientIP outside the platform = %q, want the peer", got)
	}
}
