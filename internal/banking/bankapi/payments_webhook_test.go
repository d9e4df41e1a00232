package bankapi

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/banking/bankingsql"
	"partnerapi/internal/storetest"
)

// A fully signed payment's final status reaches the partner once, signed,
// after a retried 503.
func TestPaymentWebhookDelivery(t *testing.T) {
	var mu sync.Mutex
	var got []map[string]string
	calls := 0
	secret := []byte("s3cret")
	partner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls == 1 {
			w.WriteHeader(503)
			return
		}
		if r.Header.Get("X-Signature") != WebhookSignature(secret, body) {
			t.Errorf("bad signature")
		}
		var m map[string]string
		_ = json.Unmarshal(body, &m)
		got = append(got, m)
		w.WriteHeader(204)
	}))
	defer partner.Close()

	store := implementedPayments(t, newUUID(80))
	now := payNow
	disp := &banking.WebhookDispatcher{Outbox: store, Sender: &WebhookSender{Targets: &banking.Webhooks{Store: store, Default: banking.WebhookTarget{URL: partner.URL, Secret: secret}}, URLs: loopbackURLs},
		// The 503 pauses the partner too (webhook_fair.go): for a
		// millisecond here, like the backoff, so the retry is due next pass.
		BaseBackoff: time.Millisecond, PauseBase: time.Millisecond, Now: func() time.Time { return now }}
	for range 3 {
		if _, err := disp.RunOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Second)
	}
	if len(got) != 1 || got[0]["externalId"] != newUUID(80) || got[0]["bankStatus"] != "IMPLEMENTED" || got[0]["eventTime"] != payNow.Format(time.RFC3339Nano) {
		t.Fatalf("partner got %v after %d calls", got, calls)
	}
}

// implementedPayments is a migrated SQLite payment store holding one
// sole-signed (so IMPLEMENTED, its webhook queued) document for each of
// ids, created at payNow in that order: the webhook tests' starting point.
func implementedPayments(t *testing.T, ids ...string) *bankingsql.PaymentStore {
	t.Helper()
	db := storetest.SQLite(t)
	if err := bankingsql.MigratePayments(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	store := bankingsql.NewPaymentStore(db)
	svc := &banking.PaymentService{Store: store, Verifier: &payVerifier{}, Accounts: payAccounts{banking.SandboxAccount: payOrg},
		Config: banking.PaymentConfig{Now: func() time.Time { return payNow }}}
	for _, id := range ids {
		var d banking.Payment
		_ = json.Unmarshal([]byte(payDoc(id, map[string]any{"digestSignatures": sigs(banking.SandboxCertSole)})), &d)
		if _, err := svc.Create(context.Background(), banking.Principal{OrgID: payOrg}, d); err != nil {
			t.Fatal(err)
		}
	}
	return store
}

var updateWebhook = flag.Bool("update-webhook", false, "rewrite testdata/webhook_* golden files")

// fixedTarget sends every event to one URL with one secret.
type fixedTarget banking.WebhookTarget

func (f fixedTarget) Target(context.Context, string) (banking.WebhookTarget, error) {
	return banking.WebhookTarget(f), nil
}

// TestWebhookRequestGolden pins the final-status webhook on the wire: the
// exact body, its HMAC signature and the dedup header.
func TestWebhookRequestGolden(t *testing.T) {
	var got []byte
	partner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got = fmt.Appendf(nil, "POST %s\nContent-Type: %s\nX-Event-Id: %s\nX-Signature: %s\n\n%s\n",
			r.URL.Path, r.Header.Get("Content-Type"), r.Header.Get("X-Event-Id"), r.Header.Get("X-Signature"), body)
		w.WriteHeader(204)
	}))
	defer partner.Close()
	s := &WebhookSender{Targets: fixedTarget{URL: partner.URL + "/hooks/sber", Secret: []byte("golden-secret-0001")}, URLs: loopbackURLs}
	ev := banking.WebhookEvent{ClientID: "p1", ExternalID: "0f8fad5b-d9cb-469f-a165-70867728950e", BankStatus: "REQUISITEERROR",
		BankComment: "Ошибка реквизитов", EventTime: time.Date(2026, 11, 22, 12, 0, 0, 123456000, time.UTC)}
	if sent, err := s.Send(context.Background(), ev); err != nil || sent.Status != 204 {
		t.Fatalf("send: %d %v", sent.Status, err)
	}
	const golden = "testdata/webhook_final_status.golden"
	if *updateWebhook {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("webhook request changed:\n%s\nwant:\n%s", got, want)
	}
}
