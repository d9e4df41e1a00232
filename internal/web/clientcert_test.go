package web

import (
	"crypto/tls"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"partnerapi/internal/testenv"
)

// requestCount is partnerapi_http_requests_total{api,route,method,status}
// as a scrape of m's registry reads it; 0 when there is no such series.
func requestCount(t *testing.T, m *Metrics, api, route, method string, status int) float64 {
	t.Helper()
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"api": api, "route": route, "method": method, "status": strconv.Itoa(status)}
	for _, f := range families {
		if f.GetName() != "partnerapi_http_requests_total" {
			continue
		}
	series:
		for _, s := range f.GetMetric() {
			for _, l := range s.GetLabel() {
				if want[l.GetName()] != l.GetValue() {
					continue series
				}
			}
			return s.GetCounter().GetValue()
		}
	}
	return 0
}

// A request refused for want of a client certificate (--tls-client-ca) is
// logged and counted as every other answer: one access-log line in the
// platform's format, status 400 and the page's size, its request id and
// its client, with neither the query string nor a header (no token, no
// secret), and partnerapi_http_requests_total{route="no_client_certificate",
// status="400"}. It never reaches the API. Requests with a certificate,
// and without one on a browser path, are logged and counted by their
// route as before. Before, the refusal was answered in front of the
// platform, with no line and no count: a partner whose client lost its
// certificate showed nowhere but in its own logs.
func TestClientCertRefusalIsLoggedAndCounted(t *testing.T) {
	dir := t.TempDir()
	caPath, _, ca, caKey := writeCert(t, dir, "ca", nil, nil)
	srvCert, srvKey, _, _ := writeCert(t, dir, "server", ca, caKey)
	cliCert, cliKey, _, _ := writeCert(t, dir, "client", ca, caKey)
	logs := &testenv.LogBuffer{}
	metrics := NewMetrics("test")
	errs := func(w http.ResponseWriter, r *http.Request, status int, err error) { w.WriteHeader(status) }
	mux := NewMux("banking", errs, metrics)
	var reached atomic.Int32
	hello := func(w http.ResponseWriter, r *http.Request) { reached.Add(1); _, _ = io.WriteString(w, "hello") }
	mux.HandleFunc(http.MethodGet, "/fintech/api/v1/payments", hello)
	mux.HandleFunc(http.MethodGet, "/login", hello)
	api := API{Name: "banking", Handler: mux, Errors: errs}.BuildOn(Platform{Log: slog.New(NewTextHandler(logs, nil)), Metrics: metrics})
	base, pool := serveWithClientCA(t, api, srvCert, srvKey, caPath, ca)
	pair, err := tls.LoadX509KeyPair(cliCert, cliKey)
	if err != nil {
		t.Fatal(err)
	}
	get := func(certs []tls.Certificate, path, id string) int {
		t.Helper()
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: certs}}}
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		req.Header.Set("Authorization", "Bearer secret-header")
		req.Header.Set("X-Request-Id", id)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 400 && string(page) != noClientCertPage {
			t.Fatalf("the refusal's page changed: %q", page)
		}
		return resp.StatusCode
	}
	for _, tc := range []struct {
		name        string
		certs       []tls.Certificate
		path, id    string
		status      int
		route, line string
	}{
		{"no certificate", nil, "/fintech/api/v1/payments?access_token=secret-query", "rid-refused", 400, NoClientCertRoute,
			"level=INFO msg=request api=banking method=GET path=/fintech/api/v1/payments status=400 bytes=" + strconv.Itoa(len(noClientCertPage)) + " duration="},
		{"a browser path without one", nil, "/login", "rid-browser", 200, "/login",
			"level=INFO msg=request api=banking method=GET path=/login status=200 bytes=5 duration="},
		{"a certificate", []tls.Certificate{pair}, "/fintech/api/v1/payments", "rid-cert", 200, "/fintech/api/v1/payments",
			"level=INFO msg=request api=banking method=GET path=/fintech/api/v1/payments status=200 bytes=5 duration="},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := len(logs.String())
			before := reached.Load()
			if got := get(tc.certs, tc.path, tc.id); got != tc.status {
				t.Fatalf("status %d, want %d", got, tc.status)
			}
			if n := reached.Load() - before; (n > 0) != (tc.status == 200) {
				t.Fatalf("the API reached %d times, want it reached only with an answer of its own", n)
			}
			method := http.MethodGet
			if tc.route == NoClientCertRoute {
				method = ""
			}
			// The line is written, and the request counted, once the
			// answer is out: wait for them.
			var out string
			for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
				if out = logs.String()[start:]; strings.Contains(out, "\n") && requestCount(t, metrics, "banking", tc.route, method, tc.status) > 0 {
					break
				}
			}
			if strings.Count(out, "\n") != 1 || !strings.Contains(out, tc.line) ||
				!strings.Contains(out, " request_id="+tc.id+" remote=127.0.0.1:") || strings.Contains(out, "secret") {
				t.Fatalf("access log %q, want one line with %q, its request id and client, and no secret", out, tc.line)
			}
			if v := requestCount(t, metrics, "banking", tc.route, method, tc.status); v != 1 {
				t.Fatalf("partnerapi_http_requests_total{route=%q,status=\"%d\"} = %v, want 1", tc.route, tc.status, v)
			}
		})
	}
}
