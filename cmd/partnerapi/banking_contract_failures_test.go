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
	"partnerapi/internal/banking/bankapi"
	"partnerapi/internal/web"
)

// TestBankingContractPlatformFailures provokes the 500s api/banking.yaml
// documents for /healthz, /metrics and /openapi.yaml, which no healthy live
// server gives: the banking envelope under the platform, with a health
// check that panics, a metrics collector that fails and, for a request
// marked so, a panic in front of the routes (the platform's Prepare hook,
// inside its recovery as every route is). Each answer is validated against
// its operation in the contract, strictly, and an envelope's referenceId
// must be the X-Request-Id the platform made, which leads to the log line.
func TestBankingContractPlatformFailures(t *testing.T) {
	c := loadContract(t, "banking")
	metrics := web.NewMetrics("test")
	metrics.Registry.MustRegister(failingCollector{prometheus.NewDesc("partnerapi_test_failing", "Fails every scrape.", nil, nil)})
	h := web.API{
		Name:    "banking",
		Handler: http.NotFoundHandler(),
		Errors:  bankapi.ErrorWriter(),
		Health:  func(context.Context) error { panic("the health check failed unexpectedly") },
		OpenAPI: api.Spec("banking"),
		Prepare: func(r *http.Request) {
			if r.Header.Get("X-Test-Panic") != "" {
				panic("a failure in front of the route")
			}
		},
	}.Build(slog.New(slog.NewTextHandler(io.Discard, nil)), metrics)
	srv := httptest.NewServer(h)
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
			rid := resp.Header.Get("X-Request-Id")
			if rid == "" {
				t.Error("an answer without X-Request-Id")
			}
			if tc.ctype == "application/json" {
				var e struct {
					Cause       string `json:"cause"`
					ReferenceID string `json:"referenceId"`
					Message     string `json:"message"`
				}
				if err := strictJSON(raw, &e); err != nil || e.Cause != "UNKNOWN_EXCEPTION" || e.Message == "" {
					t.Errorf("body %s, want {cause UNKNOWN_EXCEPTION, a message} (%v)", raw, err)
				}
				if e.ReferenceID != rid {
					t.Errorf("referenceId %q, want the X-Request-Id %q", e.ReferenceID, rid)
				}
				if strings.Contains(string(raw), "panic") || strings.Contains(string(raw), "failed unexpectedly") {
					t.Errorf("the envelope carries the failure's text: %s", raw)
				}
			}
			if ok, errs := c.responses.ValidateHttpResponse(req, resp); !ok {
				t.Errorf("%.300s\nthe response breaks the contract:%s", raw, describe(errs))
			}
		})
	}
}
