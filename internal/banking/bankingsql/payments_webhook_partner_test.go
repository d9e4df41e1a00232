package bankingsql

import (
	"context"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// outboxPartners reads the partner column of every outbox row by document.
func outboxPartners(t *testing.T, db *sqldb.DB) map[string]string {
	t.Helper()
	rows, err := db.R.Query(`SELECT org_id, external_id, client_id FROM banking_payment_webhooks`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var org, id, client string
		if err := rows.Scan(&org, &id, &client); err != nil {
			t.Fatal(err)
		}
		out[org+"/"+id] = client
	}
	return out
}

// Outbox rows carry the partner whether the final status comes with the
// create (the group commit) or later (AdvancePayment); each partner's log
// holds exactly its own rows, including two partners of one organisation
// and one externalId used in two organisations by two partners.
func TestOutboxRowsCarryPartner(t *testing.T) {
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := NewPaymentStore(db)
		at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
		const shared = "b1000000-0000-4000-8000-000000000009"
		type doc struct{ org, id, partner string }
		final := []doc{{"org1", "b1000000-0000-4000-8000-000000000001", "p1"}, {"org1", "b1000000-0000-4000-8000-000000000002", "p2"}, {"org1", shared, "p1"}}
		later := []doc{{"org2", shared, "p2"}, {"org2", "b1000000-0000-4000-8000-000000000003", "p2"}}
		for _, d := range final {
			sp := storedPayment(d.org, d.id)
			sp.Channel, sp.Status = banking.PartnerChannel(d.partner), banking.StatusImplemented
			if err := s.CreatePayment(ctx, sp, []banking.StatusChange{{Status: banking.StatusCreated, At: at}, {Status: banking.StatusImplemented, At: at}}); err != nil {
				t.Fatal(err)
			}
		}
		for _, d := range later {
			sp := storedPayment(d.org, d.id)
			sp.Channel, sp.Status = banking.PartnerChannel(d.partner), banking.StatusCreated
			if err := s.CreatePayment(ctx, sp, []banking.StatusChange{{Status: banking.StatusCreated, At: at}}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.AdvancePayment(ctx, d.org, d.id, banking.StatusCreated, nil,
				[]banking.StatusChange{{Status: banking.StatusImplemented, At: at.Add(time.Minute)}}); err != nil {
				t.Fatal(err)
			}
		}
		got := outboxPartners(t, db)
		want := map[string][]string{}
		for _, d := range append(final, later...) {
			if got[d.org+"/"+d.id] != d.partner {
				t.Errorf("outbox row %s/%s: partner %q, want %q", d.org, d.id, got[d.org+"/"+d.id], d.partner)
			}
			want[d.partner] = append(want[d.partner], d.org+"/"+d.id)
		}
		if len(got) != len(final)+len(later) {
			t.Fatalf("outbox rows %v", got)
		}
		for partner, keys := range want {
			ds, err := s.PartnerDeliveries(ctx, partner, 50)
			if err != nil || len(ds) != len(keys) {
				t.Fatalf("%s deliveries: %+v %v", partner, ds, err)
			}
			for _, d := range ds {
				if d.BankStatus != banking.StatusImplemented {
					t.Errorf("%s: %+v", partner, d)
				}
			}
		}
		due, err := s.DueWebhooks(ctx, at.Add(time.Hour), 50, false)
		if err != nil || len(due) != 5 {
			t.Fatalf("due %d %v", len(due), err)
		}
		for _, ev := range due {
			if ev.ClientID != got[ev.OrgID+"/"+ev.ExternalID] {
				t.Errorf("due event %s/%s of %q", ev.OrgID, ev.ExternalID, ev.ClientID)
			}
		}
	})
}

// Rows queued before the outbox had the partner column take it from their
// document when the migration adds it, so old deliveries stay in their
// partner's log.
func TestOutboxPartnerBackfill(t *testing.T) {
	upTo4 := func(ctx context.Context, db *sqldb.DB) error {
		return db.Migrate(ctx, "banking_payments", areaMigrationsUpTo(t, "payments", 4))
	}
	storetest.Each(t, upTo4, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		if _, err := db.W.Exec(`SELECT client_id FROM banking_payment_webhooks`); err == nil {
			t.Fatal("the partner column exists before its migration")
		}
		for i, channel := range []string{banking.PartnerChannel("p1"), banking.PartnerChannel("p2"), "BRANCH"} {
			id := "c1000000-0000-4000-8000-00000000000" + string(rune('1'+i))
			if _, err := db.W.Exec(`INSERT INTO banking_payments (org_id, external_id, kind, doc, kopecks, status, comment, roles, channel, created_at, updated_at)
				VALUES ($1, $2, 'PAY_DOC_RU', '{}', 1, 'IMPLEMENTED', '', '', $3, 1, 1)`, "org1", id, channel); err != nil {
				t.Fatal(err)
			}
			if _, err := db.W.Exec(`INSERT INTO banking_payment_webhooks (org_id, external_id, status, comment, event_time, next_at) VALUES ($1, $2, 'IMPLEMENTED', '', 1, 1)`,
				"org1", id); err != nil {
				t.Fatal(err)
			}
		}
		// An outbox row whose document is gone keeps an empty partner.
		if _, err := db.W.Exec(`INSERT INTO banking_payment_webhooks (org_id, external_id, status, comment, event_time, next_at) VALUES ('org1', 'gone', 'IMPLEMENTED', '', 1, 1)`); err != nil {
			t.Fatal(err)
		}
		if err := MigratePayments(ctx, db); err != nil {
			t.Fatal(err)
		}
		got := outboxPartners(t, db)
		want := map[string]string{"org1/c1000000-0000-4000-8000-000000000001": "p1", "org1/c1000000-0000-4000-8000-000000000002": "p2",
			"org1/c1000000-0000-4000-8000-000000000003": "BRANCH", "org1/gone": ""}
		for k, v := range want {
			if p, ok := got[k]; !ok || p != v {
				t.Errorf("%s: partner %q, want %q", k, p, v)
			}
		}
		s := NewPaymentStore(db)
		if ds, err := s.PartnerDeliveries(ctx, "p1", 10); err != nil || len(ds) != 1 || ds[0].ExternalID != "c1000000-0000-4000-8000-000000000001" {
			t.Fatalf("p1 after backfill: %+v %v", ds, err)
		}
	})
}

// The key rotation's store calls: every setting listed, and a swap only
// from the value the rotation read.
func TestWebhookSecretSwap(t *testing.T) {
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := NewPaymentStore(db)
		at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
		for _, id := range []string{"p2", "p1"} {
			if err := s.SetPartnerWebhook(ctx, banking.PartnerWebhook{ClientID: id, URL: "https://" + id + ".example/", SealedSecret: "v1:" + id, UpdatedAt: at}); err != nil {
				t.Fatal(err)
			}
		}
		all, err := s.PartnerWebhooks(ctx)
		if err != nil || len(all) != 2 || all[0].ClientID != "p1" || all[0].SealedSecret != "v1:p1" || all[1].URL != "https://p2.example/" || !all[0].UpdatedAt.Equal(at) {
			t.Fatalf("list %+v %v", all, err)
		}
		if ok, err := s.ReplaceWebhookSecret(ctx, "p1", "v1:stale", "v2:x:new"); err != nil || ok {
			t.Fatalf("swap from a stale value: %v %v", ok, err)
		}
		if ok, err := s.ReplaceWebhookSecret(ctx, "p1", "v1:p1", "v2:x:new"); err != nil || !ok {
			t.Fatalf("swap: %v %v", ok, err)
		}
		if w, _ := s.GetPartnerWebhook(ctx, "p1"); w.SealedSecret != "v2:x:new" || !w.UpdatedAt.Equal(at) {
			t.Fatalf("after swap %+v", w)
		}
		if w, _ := s.GetPartnerWebhook(ctx, "p2"); w.SealedSecret != "v1:p2" {
			t.Fatalf("other partner touched %+v", w)
		}
	})
}
