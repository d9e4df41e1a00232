package bankingsql

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// A dispatcher's claim and a partner's new setting both update several of
// the partner's parked events in one transaction: the claim each event it
// read, the setting every parked one to wake it. On PostgreSQL two
// transactions that lock the same rows in different orders deadlock, and
// one of them fails (a tick lost, or PUT /webhook answered 500). Here the
// events' next_at runs against their ids, so a claim reading them by
// next_at meets the wake-up's scan from the other end; both must lock in
// one order and every round must succeed.
func TestWebhookClaimAndWakeLockInOneOrder(t *testing.T) {
	const docs, rounds = 24, 40
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	refused := []banking.StatusChange{{Status: banking.StatusCreated, At: at}, {Status: banking.StatusRefusedByBank, Comment: "нет", At: at.Add(time.Second)}}
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := NewPaymentStore(db)
		for i := range docs {
			sp := storedPayment("org1", fmt.Sprintf("d0c4e000-0000-4000-8000-%012d", i))
			sp.Channel = banking.PartnerChannel("p1")
			if err := s.CreatePayment(ctx, sp, refused); err != nil {
				t.Fatal(err)
			}
		}
		now := at.Add(time.Hour)
		for round := range rounds {
			// Every event parked, the highest id due first.
			if _, err := db.W.ExecContext(ctx, `UPDATE banking_payment_webhooks SET state = 'PARKED', next_at = $1 - id`, micros(now.Add(-time.Minute))); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			errs := make([]error, 2)
			start := make(chan struct{})
			wg.Add(2)
			go func() {
				defer wg.Done()
				<-start
				_, errs[0] = NewPaymentStore(db).DueWebhooks(ctx, now, docs, false)
			}()
			go func() {
				defer wg.Done()
				<-start
				errs[1] = NewPaymentStore(db).SetPartnerWebhook(ctx, banking.PartnerWebhook{ClientID: "p1", URL: "https://partner.example/hook",
					SealedSecret: "sealed", Format: banking.WebhookFormatJSON, UpdatedAt: now.Add(time.Duration(round) * time.Second)})
			}()
			close(start)
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Fatalf("round %d: %s failed: %v", round, []string{"the claim", "the setting"}[i], err)
				}
			}
		}
		if n := countRows(t, db, "banking_payment_webhooks", "org1"); n != docs {
			t.Errorf("%d outbox rows, want %d", n, docs)
		}
	})
}
