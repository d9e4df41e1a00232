package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"partnerapi/internal/testenv"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"partnerapi/api"
	"partnerapi/internal/web"
)

// testServer runs `partnerapi serve` in-process on free ports and returns
// the base URLs by service name. The server stops when the test ends.
type testServer struct {
	urls    map[string]string
	dataDir string
	logs    *testenv.LogBuffer
}

func startServer(t *testing.T, extra ...string) *testServer {
	t.Helper()
	dir := t.TempDir()
	args := []string{"--data-dir", dir, "--banking-addr", "127.0.0.1:0", "--assistant-addr", "127.0.0.1:0",
		"--smarthome-addr", "127.0.0.1:0", "--assistant-grpc-addr", "127.0.0.1:0", "--models-dir", filepath.Join(dir, "models"), "--shutdown-timeout", "5s",
		// Unbuffered logs, so a test that reads them after a request sees
		// every line (and a check that a secret is absent is not vacuous);
		// TestServeBuffersLogLines covers the buffered default.
		"--log-flush-interval", "0"}
	args = append(args, extra...)
	ctx, cancel := context.WithCancel(context.Background())
	logs := &testenv.LogBuffer{}
	readyc := make(chan map[string]string, 1)
	errc := make(chan error, 1)
	go func() {
		errc <- serve(ctx, args, func(string) string { return "" }, stdio{in: strings.NewReader(""), out: io.Discard, err: logs},
			func(a map[string]string) { readyc <- a })
	}()
	ts := &testServer{urls: map[string]string{}, dataDir: dir, logs: logs}
	select {
	case addrs := <-readyc:
		for k, v := range addrs {
			ts.urls[k] = "http://" + v
		}
	case err := <-errc:
		cancel()
		t.Fatalf("serve failed: %v\n%s", err, logs.String())
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatal("serve did not start in 60s")
	}
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-errc:
			if err != nil {
				t.Errorf("serve returned %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Error("serve did not stop in 15s")
		}
	})
	return ts
}

func get(t *testing.T, url string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return send(t, http.DefaultClient, req)
}

// send sends req through c and returns the answer with its body read.
func send(t *testing.T, c *http.Client, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

func TestServeEveryListenerAnswersPlatformRoutes(t *testing.T) {
	ts := startServer(t)
	for _, name := range []string{"banking", "assistant", "smarthome"} {
		t.Run(name, func(t *testing.T) {
			base := ts.urls[name]
			resp, body := get(t, base+"/healthz", "X-Request-Id", "test-req-1")
			if resp.StatusCode != 200 || !strings.Contains(string(body), `"ok"`) {
				t.Fatalf("healthz: %d %s", resp.StatusCode, body)
			}
			if got := resp.Header.Get("X-Request-Id"); got != "test-req-1" {
				t.Errorf("X-Request-Id echoed as %q", got)
			}
			resp, body = get(t, base+"/openapi.yaml")
			if resp.StatusCode != 200 || !bytes.Equal(body, api.Spec(name)) {
				t.Fatalf("openapi.yaml: %d, %d bytes", resp.StatusCode, len(body))
			}
			resp, _ = get(t, base+"/no/such/route")
			if resp.StatusCode != 404 || resp.Header.Get("X-Request-Id") == "" {
				t.Fatalf("unknown route: %d, request id %q", resp.StatusCode, resp.Header.Get("X-Request-Id"))
			}
			resp, body = get(t, base+"/metrics")
			if resp.StatusCode != 200 {
				t.Fatalf("metrics: %d", resp.StatusCode)
			}
			for _, want := range []string{"partnerapi_build_info", "partnerapi_http_in_flight_requests", `partnerapi_http_requests_total{api="` + name + `"`,
				"partnerapi_sqlite_wal_frames", "partnerapi_sqlite_checkpoint_failures_total 0"} {
				if !strings.Contains(string(body), want) {
					t.Errorf("metrics lack %s", want)
				}
			}
		})
	}
	if strings.Contains(ts.logs.String(), "Bearer") {
		t.Error("logs contain an Authorization value")
	}
}

// TestServeMetricsAddr pins where /metrics is served. By default every
// API listener serves it, as before the flag. With --metrics-addr an
// address, a listener of its own serves every API's series in one scrape,
// and the API listeners answer /metrics as they answer any path they do
// not serve; off, nothing serves it. /healthz and /openapi.yaml stay on
// the API listeners either way.
func TestServeMetricsAddr(t *testing.T) {
	for _, tc := range []struct {
		name     string
		flags    []string
		public   int  // status of /metrics on the API listeners
		listener bool // a metrics listener is announced
	}{
		{name: "default", public: http.StatusOK},
		{name: "own listener", flags: []string{"--metrics-addr", "127.0.0.1:0"}, public: http.StatusNotFound, listener: true},
		{name: "off", flags: []string{"--metrics-addr", "off"}, public: http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := startServer(t, tc.flags...)
			apis := []string{"banking", "assistant", "smarthome"}
			for _, name := range apis {
				base := ts.urls[name]
				resp, body := get(t, base+"/metrics")
				if resp.StatusCode != tc.public {
					t.Errorf("%s /metrics: %d, want %d", name, resp.StatusCode, tc.public)
				}
				if tc.public == http.StatusNotFound {
					// The same answer, in the API's envelope, as a path
					// the API has never had.
					unknown, _ := get(t, base+"/no/such/route")
					if got, want := resp.Header.Get("Content-Type"), unknown.Header.Get("Content-Type"); got != want {
						t.Errorf("%s /metrics answered as %q, an unknown path as %q", name, got, want)
					}
					if strings.Contains(string(body), "partnerapi_") {
						t.Errorf("%s /metrics still tells the series: %.200s", name, body)
					}
				}
				for _, p := range []string{"/healthz", "/openapi.yaml"} {
					if resp, _ := get(t, base+p); resp.StatusCode != http.StatusOK {
						t.Errorf("%s %s: %d", name, p, resp.StatusCode)
					}
				}
			}
			murl, ok := ts.urls["metrics"]
			if ok != tc.listener {
				t.Fatalf("metrics listener announced: %v, want %v (%v)", ok, tc.listener, ts.urls)
			}
			if !tc.listener {
				return
			}
			if !strings.Contains(ts.logs.String(), "msg=listening service=metrics addr="+strings.TrimPrefix(murl, "http://")+" tls=false") {
				t.Errorf("no listening line for the metrics listener:\n%s", ts.logs.String())
			}
			resp, body := get(t, murl+"/metrics")
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("metrics listener /metrics: %d", resp.StatusCode)
			}
			// The pools' statistics by pool (SQLite's two here), so a
			// connection never given back shows.
			for _, want := range []string{"partnerapi_build_info", "partnerapi_http_in_flight_requests", "go_goroutines",
				`go_sql_in_use_connections{db_name="read"}`, `go_sql_open_connections{db_name="write"}`} {
				if !strings.Contains(string(body), want) {
					t.Errorf("metrics listener lacks %s", want)
				}
			}
			for _, name := range apis {
				if want := `partnerapi_http_requests_total{api="` + name + `"`; !strings.Contains(string(body), want) {
					t.Errorf("metrics listener lacks %s", want)
				}
			}
			for _, p := range []string{"/healthz", "/openapi.yaml", "/fintech/api/v1/payments"} {
				if resp, _ := get(t, murl+p); resp.StatusCode != http.StatusNotFound {
					t.Errorf("metrics listener %s: %d, want 404", p, resp.StatusCode)
				}
			}
		})
	}
}

// TestRoutesMatchContracts fails when a server registers a route its
// contract lacks, or the contract names one the server lacks.
func TestRoutesMatchContracts(t *testing.T) {
	ctx := context.Background()
	var store storeConfig
	store.DataDir = t.TempDir()
	db, err := store.open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	d := deps{db: db, log: discardLogger(), metrics: web.NewMetrics("test"), dataDir: store.DataDir, modelsDir: t.TempDir()}
	for _, m := range modules() {
		t.Run(m.name(), func(t *testing.T) {
			if err := m.migrate(ctx, db); err != nil {
				t.Fatal(err)
			}
			b, err := m.build(ctx, d)
			if err != nil {
				t.Fatal(err)
			}
			if b.close != nil {
				defer b.close()
			}
			router, ok := b.api.Handler.(interface{ Routes() []web.Route })
			if !ok {
				t.Fatalf("%s handler does not list its routes", m.name())
			}
			var ops []api.Operation
			for _, r := range append(router.Routes(), web.PlatformRoutes...) {
				ops = append(ops, api.Operation{Method: r.Method, Path: r.Pattern})
			}
			diff, err := api.Diff(b.api.OpenAPI, ops)
			if err != nil {
				t.Fatal(err)
			}
			if diff != "" {
				t.Errorf("routes and api/%s.yaml disagree:\n%s", m.name(), diff)
			}
		})
	}
}

func TestServeBadInputFailsAtOnce(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	roFile := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(roFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown flag", []string{"--no-such-flag"}, "no-such-flag"},
		{"data dir is a file", []string{"--data-dir", filepath.Join(roFile, "sub")}, "data dir"},
		{"unreachable database", []string{"--database-url", "postgres://nobody@127.0.0.1:1/none?connect_timeout=2"}, "database"},
		{"not a postgres url", []string{"--database-url", "mysql://x"}, "postgres://"},
		{"port in use", []string{"--data-dir", t.TempDir(), "--only", "smarthome", "--smarthome-addr", busy.Addr().String()}, "smarthome: listen"},
		{"unknown service", []string{"--only", "weather"}, "weather"},
		{"bad log format", []string{"--log-format", "xml"}, "log-format"},
		{"bad bank time zone", []string{"--only", "banking", "--banking-time-zone", "Mars/Olympus"}, "banking-time-zone"},
		{"metrics port in use", []string{"--data-dir", t.TempDir(), "--only", "smarthome", "--metrics-addr", busy.Addr().String()}, "metrics: listen"},
		{"bad trusted proxy", []string{"--trusted-proxies", "10.0.0.0/8,10.0.0.0/33"}, "--trusted-proxies: \"10.0.0.0/33\""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			args := append([]string{"--banking-addr", "127.0.0.1:0", "--assistant-addr", "127.0.0.1:0", "--smarthome-addr", "127.0.0.1:0", "--data-dir", t.TempDir()}, c.args...)
			err := serve(ctx, args, func(string) string { return "" }, stdio{out: io.Discard, err: io.Discard}, func(map[string]string) {
				t.Error("serve started despite bad input")
				cancel()
			})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want mention of %q", err, c.want)
			}
			if strings.Count(strings.TrimSpace(err.Error()), "\n") > 0 && c.name != "unknown flag" {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

func TestFlagsFromEnvironment(t *testing.T) {
	var cfg serveConfig
	fs := serveFlags(&cfg, modules())
	env := map[string]string{"PARTNERAPI_DATA_DIR": "/env/dir", "PARTNERAPI_LOG_FORMAT": "json", "PARTNERAPI_BANKING_ADDR": "127.0.0.1:1"}
	if err := parseFlags(fs, []string{"--log-format", "text"}, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	if cfg.store.DataDir != "/env/dir" || *cfg.addrs["banking"] != "127.0.0.1:1" {
		t.Errorf("env not applied: %+v", cfg.store)
	}
	if cfg.logFormat != "text" {
		t.Errorf("command line should win over env, got %q", cfg.logFormat)
	}
}

// TestServeBuffersLogLines runs serve with its default log buffer: the
// start-up lines are on the stream when the server says it is ready, and an
// access line arrives within the flush interval without one write per line.
func TestServeBuffersLogLines(t *testing.T) {
	ts := startServer(t, "--log-flush-interval", "100ms")
	if !strings.Contains(ts.logs.String(), "msg=listening service=banking") {
		t.Fatalf("start-up lines not flushed before ready:\n%s", ts.logs.String())
	}
	resp, _ := get(t, ts.urls["smarthome"]+"/healthz", "X-Request-Id", "buffered-line-probe")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz: %d", resp.StatusCode)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(ts.logs.String(), "request_id=buffered-line-probe") {
		if time.Now().After(deadline) {
			t.Fatalf("access line not flushed in 10s:\n%s", ts.logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestServeRejectsNegativeLogFlush(t *testing.T) {
	err := serve(context.Background(), []string{"--log-flush-interval", "-1s"}, func(string) string { return "" },
		stdio{out: io.Discard, err: io.Discard}, nil)
	if err == nil || !strings.Contains(err.Error(), "log-flush-interval") {
		t.Fatalf("serve --log-flush-interval -1s: %v", err)
	}
}
