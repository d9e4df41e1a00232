package main

import (
	"net/http"
	"net/http/httptest"
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

	// A fully signed sandbox payment: final at once, one webhook queued.
	formatPayment(t, ts, bankingToken(t, ts, "PAY_DOC_RU"), "c0000000-0000-4000-8000-0000000000a9")
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
