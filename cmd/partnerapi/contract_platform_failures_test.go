package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"partnerapi/api"
	"partnerapi/internal/web"
)

// checkPlatformFailures provokes the 500s a contract documents for
// /healthz, /metrics and /openapi.yaml, which no healthy live server
// gives: the API that build makes, under the platform, with a health check
// that panics, a metrics collector that fails and, for a request marked
// so, a panic in front of the routes (the platform's Prepare hook, inside
// its recovery as every route is). Each answer must be a 500 of the
// expected content type and hold to its operation in c, strictly; each
// checks what the API's own answer must carry besides (envelope: the body
// is the API's JSON error envelope rather than /metrics' plain text).
func checkPlatformFailures(t *testing.T, c *contractSpec, build func(*web.Metrics) web.API, each func(t *testing.T, resp *http.Response, raw []byte, envelope bool)) {
	t.Helper()
	metrics := web.NewMetrics("test")
	metrics.Registry.MustRegister(failingCollector{prometheus.NewDesc("partnerapi_test_failing", "Fails every scrape.", nil, nil)})
	a := build(metrics)
	a.Health = func(context.Context) error { panic("the health check failed unexpectedly") }
	a.OpenAPI = api.Spec(a.Name)
	a.Prepare = func(r *http.Request) {
		if r.Header.Get("X-Test-Panic") != "" {
			panic("a failure in front of the route")
		}
	}
	srv := httptest.NewServer(a.Build(slog.New(slog.NewTextHandler(io.Discard, nil)), metrics))
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		name, path string
		panic      bool
		ctype      string
	}{
		{name: "health check panics", path: "/healthz", ctype: "application/json"},
		{name: "metrics not gathered", path: "/metrics", ctype: "text/plain"},
		{name: "metrics panic", path: "/metrics", panic: true, ctype: "application/json"},
		{name: "contract panic", path: "/openapi.yaml", panic: true, ctype: "application/json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(context.Background(), "GET", srv.URL+tc.path, nil)
			if tc.panic {
				req.Header.Set("X-Test-Panic", "1")
			}
			resp, raw := sendRecorded(t, http.DefaultClient, req)
			if resp.StatusCode != http.StatusInternalServerError {
				t.Fatalf("status %d, want 500: %.300s", resp.StatusCode, raw)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, tc.ctype) {
				t.Errorf("Content-Type %q, want %s", ct, tc.ctype)
			}
			each(t, resp, raw, tc.ctype == "application/json")
			if ok, errs := c.responses.ValidateHttpResponse(req, resp); !ok {
				t.Errorf("%.300s\nthe response breaks the contract:%s", raw, describe(errs))
			}
		})
	}
}
