package main

import (
	"net/http"
	"strings"
	"testing"

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
	build := func(*web.Metrics) web.API {
		return web.API{Name: "banking", Handler: http.NotFoundHandler(), Errors: bankapi.ErrorWriter()}
	}
	checkPlatformFailures(t, c, build, func(t *testing.T, resp *http.Response, raw []byte, envelope bool) {
		rid := resp.Header.Get("X-Request-Id")
		if rid == "" {
			t.Error("an answer without X-Request-Id")
		}
		if !envelope {
			return
		}
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
	})
}
