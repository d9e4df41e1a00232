package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"partnerapi/internal/banking/bankapi"
)

// signedWebhookReceiver is a partner's webhook endpoint for end-to-end
// tests: it checks each delivery's X-Signature against secret, answers 204
// and hands the decoded body on (up to 16 undelivered at a time). It is
// closed when the test ends.
func signedWebhookReceiver(t *testing.T, secret string) (url string, got <-chan map[string]any) {
	t.Helper()
	deliveries := make(chan map[string]any, 128)
	partner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Header.Get("X-Signature") != bankapi.WebhookSignature([]byte(secret), body) {
			t.Errorf("webhook not signed with the secret: %s", body)
		}
		var m map[string]any
		_ = json.Unmarshal(body, &m)
		deliveries <- m
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(partner.Close)
	return partner.URL, deliveries
}

// nextWebhook is the receiver's next delivery; the test fails when none
// comes within 10 s.
func nextWebhook(t *testing.T, got <-chan map[string]any) map[string]any {
	t.Helper()
	select {
	case m := <-got:
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("no webhook in 10s")
		return nil
	}
}

// noMoreWebhooks fails the test when another delivery comes within 200 ms:
// four passes of a dispatcher run every 50 ms send nothing more.
func noMoreWebhooks(t *testing.T, got <-chan map[string]any) {
	t.Helper()
	select {
	case m := <-got:
		t.Fatalf("delivered more: %v", m)
	case <-time.After(200 * time.Millisecond):
	}
}
