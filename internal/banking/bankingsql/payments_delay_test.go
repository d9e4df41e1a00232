package bankingsql

import (
	"context"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// Two create requests announced with ExpectCreate share one transaction
// under a commit delay, whichever of them reaches the store first, and each
// is still answered on its own.
func TestCreateCommitDelay(t *testing.T) {
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		s := NewPaymentStore(db).WithCommitDelay(time.Hour)
		at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
		hist := []banking.StatusChange{{Status: banking.StatusCreated, At: at}}
		before := db.GroupCommitStats()
		ctxA, releaseA := s.ExpectCreate(context.Background())
		defer releaseA.Release()
		ctxB, releaseB := s.ExpectCreate(context.Background())
		defer releaseB.Release()
		done := make(chan error, 1)
		go func() { done <- s.CreatePayment(ctxA, storedPayment("org1", "a"), hist) }()
		if err := s.CreatePayment(ctxB, storedPayment("org1", "b"), hist); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if st := db.GroupCommitStats(); st.Batches-before.Batches != 1 || st.Items-before.Items != 2 {
			t.Fatalf("want one batch of 2: %+v → %+v", before, st)
		}
		// A duplicate in a delayed batch is refused alone.
		ctxC, releaseC := s.ExpectCreate(context.Background())
		defer releaseC.Release()
		if err := s.CreatePayment(ctxC, storedPayment("org1", "a"), hist); banking.KindOf(err) != banking.KindWorkflow {
			t.Fatalf("duplicate: %v", err)
		}
		for _, id := range []string{"a", "b"} {
			if _, err := s.GetPayment(context.Background(), "org1", id); err != nil {
				t.Fatal(err)
			}
		}
	})
}
