package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServePprof pins where the runtime's profiles are served. With
// --pprof-addr the pprof listener answers the index, a heap profile (gzip
// protobuf, what go tool pprof reads), the goroutine profile and the mutex
// one, but not /debug/pprof/cmdline, whose command line holds secrets such
// as --banking-webhook-secret; the API listeners and the metrics listener
// answer /debug/pprof/ 404 in their own way whether or not the flag is set.
func TestServePprof(t *testing.T) {
	const secret = "pprof-test-webhook-secret"
	for _, enabled := range []bool{true, false} {
		name := "off"
		if enabled {
			name = "on"
		}
		t.Run(name, func(t *testing.T) {
			args := []string{"--metrics-addr", "127.0.0.1:0", "--banking-webhook-secret", secret}
			if enabled {
				args = append(args, "--pprof-addr", "127.0.0.1:0")
			}
			ts := startServer(t, args...)
			base, served := ts.urls["pprof"]
			if served != enabled {
				t.Fatalf("pprof listener served %v with --pprof-addr %v: %v", served, enabled, ts.urls)
			}
			for _, l := range []string{"banking", "assistant", "smarthome", "metrics"} {
				for _, path := range []string{"/debug/pprof/", "/debug/pprof/heap", "/debug/pprof/goroutine?debug=1"} {
					resp, body := get(t, ts.urls[l]+path)
					if resp.StatusCode != http.StatusNotFound || bytes.Contains(body, []byte("goroutine profile")) || bytes.Contains(body, []byte("Types of profiles")) || bytes.HasPrefix(body, []byte("\x1f\x8b")) {
						t.Errorf("%s listener answers %s: %d %.200s", l, path, resp.StatusCode, body)
					}
				}
			}
			if !enabled {
				return
			}
			for _, tc := range []struct {
				path, want string
				status     int
			}{
				{"/debug/pprof/", "Types of profiles available", http.StatusOK},
				{"/debug/pprof/heap", "\x1f\x8b", http.StatusOK},
				{"/debug/pprof/allocs", "\x1f\x8b", http.StatusOK},
				{"/debug/pprof/goroutine?debug=1", "goroutine profile: total", http.StatusOK},
				{"/debug/pprof/mutex?debug=1", "sampling period=100", http.StatusOK},
				{"/debug/pprof/profile?seconds=1", "\x1f\x8b", http.StatusOK},
				{"/debug/pprof/cmdline", "", http.StatusNotFound},
			} {
				resp, body := get(t, base+tc.path)
				if resp.StatusCode != tc.status || !bytes.Contains(body, []byte(tc.want)) {
					t.Errorf("GET %s: %d %q", tc.path, resp.StatusCode, body[:min(len(body), 200)])
				}
				if bytes.Contains(body, []byte(secret)) {
					t.Errorf("GET %s shows the command line's webhook secret", tc.path)
				}
			}
		})
	}
}

// TestServePprofOffLoopbackOverTLS: an address off loopback is taken when
// the listener serves HTTPS (--tls-cert, --metrics-tls auto), and then
// answers HTTPS alone.
func TestServePprofOffLoopbackOverTLS(t *testing.T) {
	files, pool := selfSigned(t)
	ts := startServer(t, "--only", "smarthome", "--tls-cert", files.Cert, "--tls-key", files.Key, "--pprof-addr", "0.0.0.0:0")
	_, port, err := net.SplitHostPort(strings.TrimPrefix(ts.urls["pprof"], "http://"))
	if err != nil {
		t.Fatal(err)
	}
	// The certificate names 127.0.0.1; the listener is on every interface.
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := c.Get("https://127.0.0.1:" + port + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte("goroutine profile: total")) {
		t.Fatalf("HTTPS goroutine profile: %d %.200s", resp.StatusCode, body)
	}
	if resp, err := http.Get("http://127.0.0.1:" + port + "/debug/pprof/goroutine?debug=1"); err == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if bytes.Contains(body, []byte("goroutine profile")) {
			t.Fatalf("plain HTTP served the goroutine profile: %d", resp.StatusCode)
		}
	}
}

// TestServePprofAddrRefusals: serve refuses, before opening anything, a
// --pprof-addr that would serve the profiles in plain HTTP off loopback or
// is no address, each with one line naming the flag.
func TestServePprofAddrRefusals(t *testing.T) {
	files, _ := selfSigned(t)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"every interface", []string{"--pprof-addr", "0.0.0.0:0"}, `--pprof-addr: "0.0.0.0:0" is not a loopback address`},
		{"empty host", []string{"--pprof-addr", ":0"}, `--pprof-addr: ":0" is not a loopback address`},
		{"host name", []string{"--pprof-addr", "ops.example:0"}, `--pprof-addr: "ops.example:0" is not a loopback address`},
		{"IPv6 any", []string{"--pprof-addr", "[::]:0"}, `--pprof-addr: "[::]:0" is not a loopback address`},
		{"TLS turned off", []string{"--pprof-addr", "0.0.0.0:0", "--tls-cert", files.Cert, "--tls-key", files.Key, "--metrics-tls", "off"},
			`--pprof-addr: "0.0.0.0:0" is not a loopback address`},
		{"no port", []string{"--pprof-addr", "127.0.0.1"}, `--pprof-addr: "127.0.0.1" is no host:port address`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			dir := t.TempDir()
			args := append([]string{"--data-dir", dir, "--models-dir", dir + "/models", "--only", "smarthome", "--smarthome-addr", "127.0.0.1:0"}, tc.args...)
			err := serve(ctx, args, func(string) string { return "" }, stdio{out: io.Discard, err: io.Discard}, func(map[string]string) {
				t.Errorf("serve started with %v", tc.args)
				cancel()
			})
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("serve with %v: %v; want one line starting %s", tc.args, err, tc.want)
			}
		})
	}
}

// TestPprofListenCheckLoopback: the loopback names and literals taken in
// plain HTTP, the IPv6 one included (not bound above, as a test host may
// have no IPv6).
func TestPprofListenCheckLoopback(t *testing.T) {
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:6060", true},
		{"127.0.0.2:6060", true},
		{"[::1]:6060", true},
		{"localhost:6060", true},
		{"LocalHost:6060", true},
		{"10.0.0.5:6060", false},
		{"[::ffff:10.0.0.5]:6060", false},
		{"localhost.example:6060", false},
	} {
		if err := pprofListenCheck(tc.addr, false); (err == nil) != tc.ok {
			t.Errorf("pprofListenCheck(%q, plain): %v, want ok %v", tc.addr, err, tc.ok)
		}
		if err := pprofListenCheck(tc.addr, true); err != nil {
			t.Errorf("pprofListenCheck(%q, TLS): %v", tc.addr, err)
		}
	}
}
