package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/banking/bankapi"
	"partnerapi/internal/gost"
)

// The deployment's default webhook (--banking-webhook-url) sends the format
// --banking-webhook-format names to partners without their own setting:
// with jose, the JWS of the JSON body under the bank's key, verifiable with
// the certificate the CLI prints, HMAC-signed with the default secret over
// the body sent, shown as the default's format by GET /v1/webhook and
// recorded in the delivery log.
func TestBankingDefaultWebhookFormat(t *testing.T) {
	const secret = "default-hook-secret-0001"
	got := make(chan formatHook, 4)
	partner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- formatHook{contentType: r.Header.Get("Content-Type"), signature: r.Header.Get("X-Signature"), body: body}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer partner.Close()
	dir := t.TempDir()
	ts := startServer(t, "--only", "banking", "--data-dir", dir, "--banking-webhook-interval", "50ms", "--banking-webhook-allow-private",
		"--banking-webhook-url", partner.URL, "--banking-webhook-secret", secret, "--banking-webhook-format", "jose")
	ts.dataDir = dir
	tok := "Bearer " + bankingToken(t, ts, "PAY_DOC_RU")
	if st, m := bankRequestJSON(t, "GET", ts.urls["banking"]+"/fintech/api/v1/webhook", tok, nil); st != 200 || m["source"] != "default" || m["format"] != "jose" {
		t.Fatalf("GET webhook: %d %v, want the default in jose", st, m)
	}
	const id = "d0000000-0000-4000-8000-0000000000d1"
	formatPayment(t, ts, tok, id)
	var h formatHook
	select {
	case h = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("no webhook in 10s")
	}
	if h.contentType != "application/jose" {
		t.Fatalf("content type %q, want application/jose", h.contentType)
	}
	if h.signature != bankapi.WebhookSignature([]byte(secret), h.body) {
		t.Errorf("X-Signature %q is not the default secret's HMAC of the body sent", h.signature)
	}
	jws, err := gost.ParseJWS(string(h.body))
	if err != nil {
		t.Fatalf("body %s: %v", h.body, err)
	}
	if err := jws.Verify(bankingJWSCertificate(t, "--data-dir", dir)); err != nil {
		t.Fatalf("JWS does not verify with the printed certificate: %v", err)
	}
	checkJoseWebhook(t, jws, deliveredJSON(t, ts, tok, id))
	if f := attemptFormat(t, ts, tok, id); f != banking.WebhookFormatJOSE {
		t.Errorf("delivery log format %q, want jose", f)
	}
}

// An unknown default format stops serve at once, naming the flag.
func TestBankingDefaultWebhookFormatChecked(t *testing.T) {
	for _, format := range []string{"xml", "JOSE", ""} {
		err := serve(context.Background(), []string{"--data-dir", t.TempDir(), "--only", "banking", "--banking-addr", "127.0.0.1:0", "--banking-webhook-format", format},
			func(string) string { return "" }, stdio{in: strings.NewReader(""), out: io.Discard, err: io.Discard}, nil)
		if err == nil || !strings.Contains(err.Error(), "banking-webhook-format") {
			t.Errorf("format %q: %v", format, err)
		}
	}
}
