package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"partnerapi/internal/banking"
)

// serve hands --banking-webhook-max-age to the outbox: with a limit
// shorter than any claim can follow a payment's final status, the event is
// failed with "expired after …" in its delivery log (the CLI's and the
// API's) and the receiver, up all along, gets nothing.
func TestServeBankingWebhookMaxAge(t *testing.T) {
	var received atomic.Int32
	partner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		received.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer partner.Close()
	ts := startServer(t, "--banking-webhook-interval", "50ms", "--banking-webhook-allow-private",
		"--banking-webhook-url", partner.URL, "--banking-webhook-max-age", "1us")

	tok := bankingToken(t, ts, "PAY_DOC_RU")
	id := "c0000000-0000-4000-8000-0000000000a9"
	body := `{"externalId":"` + id + `","date":"` + time.Now().UTC().Format(time.DateOnly) + `","amount":1,"operationCode":"01","priority":"5",` +
		`"purpose":"Оплата","payerName":"ООО","payerInn":"` + banking.SandboxOrgINN + `","payerAccount":"` + banking.SandboxAccount +
		`","payerBankBic":"` + banking.SandboxBIC + `","payerBankCorrAccount":"` + banking.SandboxCorrAccount +
		`","payeeName":"АО","payeeBankBic":"049805746","payeeAccount":"40602810700000000025",` +
		`"digestSignatures":[{"base64Encoded":"MIIB","certificateUuid":"` + banking.SandboxCertSole + `"}]}`
	req, _ := http.NewRequest("POST", ts.urls["banking"]+"/fintech/api/v1/payments", strings.NewReader(body))
	req.Header.Set("Authorization", tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Fatalf("create: %d", resp.StatusCode)
	}
	const reason = "expired after 1µs"
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		log, err := webhookCLI(t, ts.dataDir, "deliveries", "--client-id", banking.SandboxClientID)
		if err != nil {
			t.Fatal(err)
		}
		ds, _ := log["deliveries"].([]any)
		if len(ds) == 1 && ds[0].(map[string]any)["state"] == "FAILED" {
			d := ds[0].(map[string]any)
			a, _ := d["log"].([]any)
			if d["lastError"] != reason || d["attempts"] != float64(0) || len(a) != 1 || a[0].(map[string]any)["error"] != reason ||
				a[0].(map[string]any)["httpStatus"] != nil {
				t.Fatalf("delivery %v, want failed with %q and no attempt", d, reason)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("deliveries %v, want the event failed as expired", log)
		}
	}
	time.Sleep(200 * time.Millisecond) // a few more passes
	if n := received.Load(); n != 0 {
		t.Fatalf("the receiver got %d webhooks of an expired event", n)
	}
}
