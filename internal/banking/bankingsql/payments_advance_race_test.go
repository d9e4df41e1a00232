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

// TestConcurrentSignings signs one document from many goroutines at once,
// each from the status it read (CREATED), with the first or the second
// signature, as two signers of one organisation pressing "sign" together
// do. The move is a compare-and-set on the status, so exactly one lands;
// the rest get the workflow error that asks for a retry (which reads the
// new status and keeps the winner's roles), never a second history entry
// or a role set written over by a loser.
func TestConcurrentSignings(t *testing.T) {
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := NewPaymentStore(db)
		at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
		const docs, signers = 10, 8
		for d := range docs {
			id := fmt.Sprintf("0f8fad5b-d9cb-469f-a165-%012d", d)
			if err := s.CreatePayment(ctx, storedPayment("org1", id), []banking.StatusChange{{Status: banking.StatusCreated, At: at}}); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			var mu sync.Mutex
			var won []banking.SignatureRole
			for i := range signers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					role := banking.RoleFirst
					if i%2 == 1 {
						role = banking.RoleSecond
					}
					_, err := s.AdvancePayment(ctx, "org1", id, banking.StatusCreated, []banking.SignatureRole{role},
						[]banking.StatusChange{{Status: banking.StatusPartSigned, At: at.Add(time.Second)}})
					switch {
					case err == nil:
						mu.Lock()
						won = append(won, role)
						mu.Unlock()
					case banking.KindOf(err) != banking.KindWorkflow:
						t.Errorf("%s: concurrent signing: %v, want a workflow error", id, err)
					}
				}()
			}
			wg.Wait()
			if len(won) != 1 {
				t.Fatalf("%s: %d of %d concurrent signings from CREATED landed, want 1", id, len(won), signers)
			}
			sp, err := s.GetPayment(ctx, "org1", id)
			if err != nil || sp.Status != banking.StatusPartSigned || len(sp.Roles) != 1 || sp.Roles[0] != won[0] {
				t.Fatalf("%s: after the race %+v (%v), want PARTSIGNED with the winner's role %s", id, sp, err, won[0])
			}
			h, err := s.PaymentHistory(ctx, "org1", id)
			if err != nil || len(h) != 2 {
				t.Fatalf("%s: history %+v (%v), want CREATED and one PARTSIGNED", id, h, err)
			}
		}
	})
}
