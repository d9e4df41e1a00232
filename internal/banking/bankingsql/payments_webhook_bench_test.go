package bankingsql

import (
	"context"
	"fmt"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// BenchmarkDueWebhooksUnconfigured measures one dispatcher tick over an
// outbox of 20 000 events whose partner has no webhook, with no deployment
// default and one other partner configured. "parked" is DueWebhooks once
// those events are parked; "scan" is, in the same run, the query it
// replaced: every pending event joined to its document and filtered by the
// partner's setting on every tick.
func BenchmarkDueWebhooksUnconfigured(b *testing.B) {
	ctx := context.Background()
	db, s, at := benchOutbox(b, func(int) string { return "" })
	if err := s.SetPartnerWebhook(ctx, banking.PartnerWebhook{ClientID: "other", URL: "https://x.example/", SealedSecret: "v1:x", UpdatedAt: at}); err != nil {
		b.Fatal(err)
	}
	tickAt := at.Add(time.Minute)
	for range 20000/100 + 1 {
		if _, err := s.DueWebhooks(ctx, tickAt, 100, true); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("parked", func(b *testing.B) {
		for b.Loop() {
			if due, err := s.DueWebhooks(ctx, tickAt, 100, true); err != nil || len(due) != 0 {
				b.Fatalf("%d %v", len(due), err)
			}
		}
	})
	partnerOfChannel := fmt.Sprintf("substr(p.channel, %d)", len(banking.PartnerChannel(""))+1)
	b.Run("scan", func(b *testing.B) {
		for b.Loop() {
			rows, err := db.R.QueryContext(ctx, `SELECT w.id FROM banking_payment_webhooks w
				LEFT JOIN banking_payments p ON p.org_id = w.org_id AND p.external_id = w.external_id
				WHERE w.state IN ('PENDING', 'PARKED') AND EXISTS (SELECT 1 FROM banking_partner_webhooks s WHERE s.client_id = `+partnerOfChannel+`)
				ORDER BY w.next_at, w.id LIMIT 100`)
			if err != nil {
				b.Fatal(err)
			}
			for rows.Next() {
				b.Fatal("an event of an unconfigured partner was selected")
			}
			rows.Close()
		}
	})
}

// benchOutbox opens a migrated SQLite payment store holding 20 000
// implemented documents of org1, each with its outbox event; channel gives
// document i's channel ("" for none). It returns the database, the store and
// the documents' status time.
func benchOutbox(b *testing.B, channel func(i int) string) (*sqldb.DB, *PaymentStore, time.Time) {
	ctx := context.Background()
	db := storetest.SQLite(b)
	if err := MigratePayments(ctx, db); err != nil {
		b.Fatal(err)
	}
	s := NewPaymentStore(db)
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for i := range 20000 {
		sp := storedPayment("org1", fmt.Sprintf("bench-%d", i))
		sp.Status = banking.StatusImplemented
		if c := channel(i); c != "" {
			sp.Channel = c
		}
		if err := s.CreatePayment(ctx, sp, []banking.StatusChange{{Status: banking.StatusImplemented, At: at}}); err != nil {
			b.Fatal(err)
		}
	}
	return db, s, at
}
