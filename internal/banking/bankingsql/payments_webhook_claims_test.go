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

// Dispatchers of several processes share one database (PostgreSQL; on
// SQLite, several stores on one file): when they claim due webhooks at the
// same moment, each event is handed to exactly one of them. Half the
// documents walked to their final status, so their events are first
// materialised from the walk outbox by whichever dispatcher gets there
// first, which must not insert them twice either.
func TestWebhookClaimsAcrossDispatchers(t *testing.T) {
	const docs, dispatchers, batch = 60, 4, 7
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	refused := []banking.StatusChange{{Status: banking.StatusCreated, At: at}, {Status: banking.StatusRefusedByBank, Comment: "нет", At: at.Add(time.Second)}}
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := NewPaymentStore(db)
		for i := range docs {
			sp := storedPayment("org1", fmt.Sprintf("c1a1e000-0000-4000-8000-%012d", i))
			sp.Channel = banking.PartnerChannel("p1")
			history := refused
			if i%2 == 0 {
				history = walkOf(at)
			}
			if err := s.CreatePayment(ctx, sp, history); err != nil {
				t.Fatal(err)
			}
		}

		now := at.Add(time.Hour)
		var mu sync.Mutex
		claims := map[string]int{} // externalId → times claimed
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make(chan error, dispatchers)
		for range dispatchers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				d := NewPaymentStore(db) // a process of its own
				<-start
				for empty := 0; empty < 3; {
					evs, err := d.DueWebhooks(ctx, now, batch, false)
					if err != nil {
						errs <- err
						return
					}
					if len(evs) == 0 {
						empty++
						continue
					}
					mu.Lock()
					for _, ev := range evs {
						claims[ev.ExternalID]++
					}
					mu.Unlock()
				}
			}()
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		// Whatever a dispatcher lost to a busy moment is still due; one
		// more drains it, and the union must hold every event once.
		for {
			evs, err := s.DueWebhooks(ctx, now, batch, false)
			if err != nil {
				t.Fatal(err)
			}
			if len(evs) == 0 {
				break
			}
			for _, ev := range evs {
				claims[ev.ExternalID]++
			}
		}
		if len(claims) != docs {
			t.Errorf("%d documents' events claimed, want %d", len(claims), docs)
		}
		for id, n := range claims {
			if n != 1 {
				t.Errorf("%s claimed %d times", id, n)
			}
		}
		if n := countRows(t, db, "banking_payment_webhooks", "org1"); n != docs {
			t.Errorf("%d outbox rows, want %d", n, docs)
		}
	})
}
