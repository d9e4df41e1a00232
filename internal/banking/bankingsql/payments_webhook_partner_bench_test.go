package bankingsql

import (
	"context"
	"fmt"
	"testing"

	"partnerapi/internal/banking"
)

// BenchmarkPartnerDeliveries measures one page (50) of a partner's delivery
// log over an outbox of 20 000 events of ten partners. "column" is
// PartnerDeliveries on the outbox's own partner column; "join" is, in the
// same run, the query it replaced: the outbox joined to the documents and
// filtered by their channel. Both read the attempts the same way, so only
// the first query is compared.
func BenchmarkPartnerDeliveries(b *testing.B) {
	ctx := context.Background()
	db, _, _ := benchOutbox(b, func(i int) string { return banking.PartnerChannel(fmt.Sprintf("p%d", i%10)) })
	b.Run("column", func(b *testing.B) {
		for b.Loop() {
			rows, err := db.R.QueryContext(ctx, `SELECT w.id, w.external_id, w.status, w.comment, w.event_time, w.state, w.attempts,
					w.next_at, COALESCE(w.delivered_at, 0), w.last_error
				FROM banking_payment_webhooks w
				WHERE w.client_id = $1 ORDER BY w.id DESC LIMIT $2`, "p3", 50)
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for rows.Next() {
				n++
			}
			rows.Close()
			if n != 50 {
				b.Fatalf("%d rows", n)
			}
		}
	})
	b.Run("join", func(b *testing.B) {
		for b.Loop() {
			rows, err := db.R.QueryContext(ctx, `SELECT w.id, w.external_id, w.status, w.comment, w.event_time, w.state, w.attempts,
					w.next_at, COALESCE(w.delivered_at, 0), w.last_error
				FROM banking_payment_webhooks w JOIN banking_payments p ON p.org_id = w.org_id AND p.external_id = w.external_id
				WHERE p.channel = $1 ORDER BY w.id DESC LIMIT $2`, banking.PartnerChannel("p3"), 50)
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for rows.Next() {
				n++
			}
			rows.Close()
			if n != 50 {
				b.Fatalf("%d rows", n)
			}
		}
	})
}
