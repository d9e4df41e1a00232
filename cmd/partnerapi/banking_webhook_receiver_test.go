package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"partnerapi/internal/banking/bankapi"
)

// signedWebhookReceiver is a partner's webhook endpoint for end-to-end
// tests: it checks each delivery's X-Signature against secret, answers 204
// and hands the decoded body on (up to 16 undelivered at a time). It is
// closed when the test ends.
func signedWebhookReceiver(t *testing.T, secret string) (url string, got <-chan map[string]any) {
	t.Helper()
	deliveries := make(chan map[string]any, 16)
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
