package bankapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
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

	db := storetest.SQLite(t)
	if err := bankingsql.MigratePayments(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	store := bankingsql.NewPaymentStore(db)
	svc := &banking.PaymentService{Store: store, Verifier: &payVerifier{}, Accounts: payAccounts{banking.SandboxAccount: payOrg},
		Config: banking.PaymentConfig{Now: func() time.Time { return payNow }}}
	var d banking.Payment
	_ = json.Unmarshal([]byte(payDoc(newUUID(80), map[string]any{"digestSignatures": sigs(banking.SandboxCertSole)})), &d)
	if _, err := svc.Create(context.Background(), banking.Principal{OrgID: payOrg}, d); err != nil {
		t.Fatal(err)
	}
	now := payNow
	disp := &banking.WebhookDispatcher{Outbox: store, Sender: &WebhookSender{Targets: &banking.Webhooks{Store: store, Default: banking.WebhookTarget{URL: partner.URL, Secret: secret}}},
		BaseBackoff: time.Millisecond, Now: func() time.Time { return now }}
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
