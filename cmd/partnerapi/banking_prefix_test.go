package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/banking"
)

// --banking-prefix serves the API under a path of the deployment's own
// (reference §1), the provider's /fintech/api too, and the contract shows
// the paths a client of this deployment calls; the OAuth paths stay.
func TestServeBankingPrefix(t *testing.T) {
	ts := startServer(t, "--only", "banking", "--banking-prefix", "/bank/fintech/api")
	base := ts.urls["banking"]
	tok := "Bearer " + bankingToken(t, ts, "PAY_DOC_RU")
	id := "6f9c1e2a-3b4d-4c5e-8f70-1a2b3c4d5e6f"
	req, _ := http.NewRequest("POST", base+"/bank/fintech/api/v1/payments", bytes.NewReader(banking.SandboxPaymentJSON(id, time.Now().UTC().Format(time.DateOnly))))
	req.Header.Set("Authorization", tok)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Fatalf("create under the prefix: %d %s", resp.StatusCode, raw)
	}
	for _, p := range []string{"/bank/fintech/api/v1/payments/" + id, "/fintech/api/v1/payments/" + id} {
		if status, body := bankRequest(t, "GET", base+p, tok, nil); status != 200 || !strings.Contains(string(body), id) {
			t.Errorf("GET %s: %d %s", p, status, body)
		}
	}
	if status, _ := bankRequest(t, "GET", base+"/bank/fintech/api/v1/nothing-here", tok, nil); status != 404 {
		t.Errorf("an unknown path under the prefix: %d", status)
	}
	_, spec := get(t, base+"/openapi.yaml")
	if !strings.Contains(string(spec), "\n  /bank/fintech/api/v1/payments:") || strings.Contains(string(spec), "\n  /fintech/api/") ||
		!strings.Contains(string(spec), "\n  /ic/sso/api/v2/oauth/token:") {
		t.Errorf("the served contract does not show the prefix's paths")
	}
	err = run(context.Background(), []string{"serve", "--only", "banking", "--data-dir", t.TempDir(), "--banking-prefix", "bank/"},
		noEnv, stdio{in: strings.NewReader(""), out: io.Discard, err: io.Discard})
	if err == nil || !strings.Contains(err.Error(), "--banking-prefix") {
		t.Fatalf("serve with a bad prefix: %v", err)
	}
}
