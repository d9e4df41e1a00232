package bankingsql

import (
	"context"
	"sync"
	"testing"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// ReserveNumbers hands out consecutive blocks per organisation, each
// organisation's counter its own, and keeps the counter in the database, so
// a second store on the same database (a restarted process) continues above
// every block the first one took.
func TestReserveNumbers(t *testing.T) {
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := NewPaymentStore(db)
		for _, tc := range []struct {
			store *PaymentStore
			org   string
			n     int64
			want  int64
		}{
			{s, "org1", 64, 64},
			{s, "org1", 64, 128},
			{s, "org2", 10, 10},
			{NewPaymentStore(db), "org1", 1, 129}, // a restarted process
			{s, "org2", 64, 74},
		} {
			got, err := tc.store.ReserveNumbers(ctx, tc.org, tc.n)
			if err != nil || got != tc.want {
				t.Fatalf("ReserveNumbers(%s, %d) = %d, %v; want %d", tc.org, tc.n, got, err, tc.want)
			}
		}
	})
}

// Concurrent reservations of one organisation get disjoint blocks: the
// counter's update is atomic on both engines.
func TestReserveNumbersConcurrent(t *testing.T) {
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		const n, block = 16, 8
		s := NewPaymentStore(db)
		lasts := make([]int64, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				last, err := s.ReserveNumbers(context.Background(), "org1", block)
				if err != nil {
					t.Error(err)
				}
				lasts[i] = last
			})
		}
		wg.Wait()
		seen := map[int64]bool{}
		for _, l := range lasts {
			if l%block != 0 || l < block || l > n*block || seen[l] {
				t.Fatalf("blocks ending at %v overlap or stray", lasts)
			}
			seen[l] = true
		}
	})
}

// Migration 0009 starts an organisation that already has payment orders
// after their count; invoice drafts do not count, they carry no number.
func TestPaymentNumbersMigration(t *testing.T) {
	upTo8 := func(ctx context.Context, db *sqldb.DB) error {
		return db.Migrate(ctx, "banking_payments", areaMigrationsUpTo(t, "payments", 8))
	}
	storetest.Each(t, upTo8, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		// The documents as that release wrote them: the store of today
		// writes columns later migrations add, so they are inserted as rows.
		for id, kind := range map[string]banking.DocKind{"a": banking.KindPayDoc, "b": banking.KindPayDoc, "c": banking.KindInvoice} {
			if _, err := db.W.Exec(`INSERT INTO banking_payments (org_id, external_id, kind, doc, kopecks, status, comment, roles, channel, created_at, updated_at)
				VALUES ('org1', $1, $2, '{}', 1, 'CREATED', '', '', 'API:p', 1, 1)`, id, string(kind)); err != nil {
				t.Fatal(err)
			}
		}
		if err := MigratePayments(ctx, db); err != nil {
			t.Fatal(err)
		}
		s := NewPaymentStore(db)
		for _, tc := range []struct {
			org  string
			want int64
		}{{"org1", 3}, {"org2", 1}} {
			if got, err := s.ReserveNumbers(ctx, tc.org, 1); err != nil || got != tc.want {
				t.Fatalf("%s: first number %d, %v; want %d", tc.org, got, err, tc.want)
			}
		}
	})
}
