package bankapi

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/gost"
)

// The golden event sent in each format: json is the golden request byte
// for byte; jose is the JWS of the golden body and its recipient under the
// bank's key, typed as a webhook, with X-Signature over the JWS and the
// same dedup header.
func TestWebhookFormats(t *testing.T) {
	golden, err := os.ReadFile("testdata/webhook_final_status.golden")
	if err != nil {
		t.Fatal(err)
	}
	head, goldenBody, _ := bytes.Cut(golden, []byte("\n\n"))
	goldenBody = bytes.TrimSuffix(goldenBody, []byte("\n"))
	key, err := banking.NewBankKey(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	type request struct {
		contentType, eventID, signature string
		body                            []byte
	}
	got := make(chan request, 1)
	partner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- request{r.Header.Get("Content-Type"), r.Header.Get("X-Event-Id"), r.Header.Get("X-Signature"), body}
		w.WriteHeader(204)
	}))
	defer partner.Close()
	secret := []byte("golden-secret-0001")
	ev := banking.WebhookEvent{ClientID: "p1", ExternalID: "0f8fad5b-d9cb-469f-a165-70867728950e", BankStatus: "REQUISITEERROR",
		BankComment: "Ошибка реквизитов", EventTime: time.Date(2026, 11, 22, 12, 0, 0, 123456000, time.UTC)}
	for _, tc := range []struct {
		name, format string
		jws          *banking.BankKey
		fails        bool
	}{
		{name: "empty is json", format: "", jws: key},
		{name: "json", format: banking.WebhookFormatJSON, jws: key},
		{name: "jose", format: banking.WebhookFormatJOSE, jws: key},
		{name: "jose without a bank key", format: banking.WebhookFormatJOSE, fails: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &WebhookSender{Targets: fixedTarget{URL: partner.URL + "/hooks/sber", Secret: secret, Format: tc.format}, URLs: loopbackURLs, JWS: tc.jws}
			sent, err := s.Send(context.Background(), ev)
			st, format := sent.Status, sent.Format
			want := banking.WebhookFormatJSON
			if tc.format == banking.WebhookFormatJOSE {
				want = banking.WebhookFormatJOSE
			}
			if format != want {
				t.Fatalf("reported format %q, want %q", format, want)
			}
			if tc.fails {
				if err == nil {
					t.Fatalf("sent %d without a key to sign with", st)
				}
				return
			}
			if err != nil || st != 204 {
				t.Fatalf("send: %d %v", st, err)
			}
			r := <-got
			if r.signature != WebhookSignature(secret, r.body) || !bytes.Contains(head, []byte("X-Event-Id: "+r.eventID+"\n")) {
				t.Fatalf("headers %+v", r)
			}
			if tc.format != banking.WebhookFormatJOSE {
				if r.contentType != "application/json" || !bytes.Equal(r.body, goldenBody) {
					t.Fatalf("json body %q %s, want the golden %s", r.contentType, r.body, goldenBody)
				}
				return
			}
			if r.contentType != "application/jose" {
				t.Fatalf("content type %q", r.contentType)
			}
			jws, err := gost.ParseJWS(string(r.body))
			if err != nil {
				t.Fatal(err)
			}
			// The golden body and its recipient, under a header typed as a
			// webhook: no API answer, which any partner can get signed,
			// passes for one, nor does another partner's webhook.
			payload := append(bytes.TrimSuffix(bytes.Clone(goldenBody), []byte("}")), `,"clientId":"p1"}`...)
			if err := jws.Verify(key.Cert); err != nil || jws.Header.Kid != key.Kid || jws.Header.Typ != banking.JWSTypeWebhook || !bytes.Equal(jws.Payload, payload) {
				t.Fatalf("JWS %+v: %v; payload %s, want %s", jws.Header, err, jws.Payload, payload)
			}
		})
	}
}
