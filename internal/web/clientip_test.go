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

func TestParseTrustedProxies(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{in: "", want: ""},
		{in: " , ", want: ""},
		{in: "10.0.0.0/8", want: "10.0.0.0/8"},
		{in: "10.1.2.3/8", want: "10.0.0.0/8"}, // host bits dropped: the prefix is what is trusted
		{in: "192.0.2.7", want: "192.0.2.7/32"},
		{in: "2001:db8::1", want: "2001:db8::1/128"},
		{in: "fd00::/8, 127.0.0.1", want: "fd00::/8,127.0.0.1/32"},
		{in: "::ffff:10.0.0.0/104", want: "10.0.0.0/8"},
		{in: "::ffff:192.0.2.7", want: "192.0.2.7/32"},
		{in: "10.0.0.0/33", err: `"10.0.0.0/33"`},
		{in: "proxy.internal", err: `"proxy.internal"`},
		{in: "10.0.0.1,nope", err: `"nope"`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseTrustedProxies(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ParseTrustedProxies(%q) = %v, %v; want an error naming %s", tc.in, got, err, tc.err)
				}
				return
			}
			if err != nil || got.String() != tc.want {
				t.Fatalf("ParseTrustedProxies(%q) = %q, %v; want %q", tc.in, got.String(), err, tc.want)
			}
		})
	}
}

// TestClientIP pins which address a request is taken to come from: the
// peer's unless the peer is trusted, and then the right-most untrusted
// X-Forwarded-For entry, so that a client cannot choose its address by
// writing the header itself.
func TestClientIP(t *testing.T) {
	trusted, err := ParseTrustedProxies("10.0.0.0/8, 192.0.2.1, fd00::/8")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		proxies   TrustedProxies
		peer      string
		xff       []string // one header line each
		realIP    string
		want      string
		forwarded bool
	}{
		{name: "no proxies: headers ignored", peer: "203.0.113.5:4000", xff: []string{"198.51.100.1"}, realIP: "198.51.100.2", want: "203.0.113.5"},
		{name: "no proxies: trusted-looking peer still itself", peer: "10.0.0.1:4000", xff: []string{"198.51.100.1"}, want: "10.0.0.1"},
		{name: "untrusted peer: headers ignored", proxies: trusted, peer: "203.0.113.5:4000", xff: []string{"198.51.100.1"}, want: "203.0.113.5"},
		{name: "trusted peer without headers", proxies: trusted, peer: "10.0.0.1:4000", want: "10.0.0.1"},
		{name: "one proxy", proxies: trusted, peer: "10.0.0.1:4000", xff: []string{"198.51.100.1"}, want: "198.51.100.1", forwarded: true},
		{name: "client's own entries left of the real one", proxies: trusted, peer: "10.0.0.1:4000",
			xff: []string{"1.1.1.1, 2.2.2.2, 198.51.100.1"}, want: "198.51.100.1", forwarded: true},
		{name: "client claims a trusted address", proxies: trusted, peer: "10.0.0.1:4000",
			xff: []string{"10.9.9.9, 198.51.100.1"}, want: "198.51.100.1", forwarded: true},
		{name: "two trusted hops", proxies: trusted, peer: "10.0.0.1:4000",
			xff: []string{"6.6.6.6, 198.51.100.1, 192.0.2.1, 10.2.3.4"}, want: "198.51.100.1", forwarded: true},
		{name: "header split over lines", proxies: trusted, peer: "10.0.0.1:4000",
			xff: []string{"6.6.6.6, 198.51.100.1", "192.0.2.1"}, want: "198.51.100.1", forwarded: true},
		{name: "every hop trusted: the left-most", proxies: trusted, peer: "10.0.0.1:4000",
			xff: []string{"10.3.3.3, 192.0.2.1"}, want: "10.3.3.3", forwarded: true},
		{name: "entries with ports and brackets", proxies: trusted, peer: "[fd00::1]:4000",
			xff: []string{"[2001:db8::7]:5555, 10.1.1.1:80"}, want: "2001:db8::7", forwarded: true},
		{name: "IPv4-mapped peer and entry", proxies: trusted, peer: "[::ffff:10.0.0.1]:4000",
			xff: []string{"::ffff:198.51.100.1"}, want: "198.51.100.1", forwarded: true},
		{name: "garbage from a trusted hop stops at that hop", proxies: trusted, peer: "10.0.0.1:4000",
			xff: []string{"198.51.100.1, unknown, 192.0.2.1"}, want: "192.0.2.1", forwarded: true},
		{name: "empty entries skipped", proxies: trusted, peer: "10.0.0.1:4000", xff: []string{"198.51.100.1, , "}, want: "198.51.100.1", forwarded: true},
		{name: "X-Real-IP without X-Forwarded-For", proxies: trusted, peer: "10.0.0.1:4000", realIP: "198.51.100.9", want: "198.51.100.9", forwarded: true},
		{name: "X-Forwarded-For wins over X-Real-IP", proxies: trusted, peer: "10.0.0.1:4000",
			xff: []string{"198.51.100.1"}, realIP: "198.51.100.9", want: "198.51.100.1", forwarded: true},
		{name: "bad X-Real-IP: the peer", proxies: trusted, peer: "10.0.0.1:4000", realIP: "somewhere", want: "10.0.0.1"},
		{name: "X-Real-IP from an untrusted peer ignored", proxies: trusted, peer: "203.0.113.5:4000", realIP: "198.51.100.9", want: "203.0.113.5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tc.peer
			for _, v := range tc.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if tc.realIP != "" {
				r.Header.Set("X-Real-IP", tc.realIP)
			}
			got, forwarded := tc.proxies.clientIP(r)
			if got != tc.want || forwarded != tc.forwarded {
				t.Errorf("clientIP = %q (forwarded %v), want %q (forwarded %v)", got, forwarded, tc.want, tc.forwarded)
			}
		})
	}
}

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
