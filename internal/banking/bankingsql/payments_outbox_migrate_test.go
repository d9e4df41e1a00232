package bankingsql

import (
	"context"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// Migration 0007 rebuilds the outbox (SQLite) or drops its unique key
// (PostgreSQL): queued, delivered and failed rows keep every column and
// their ids, new rows get larger ids, and the dispatcher's and the partner
// log's queries still find their rows.
func TestOutboxKeysMigration(t *testing.T) {
	upTo6 := func(ctx context.Context, db *sqldb.DB) error {
		return db.Migrate(ctx, "banking_payments", areaMigrationsUpTo(t, "payments", 6))
	}
	storetest.Each(t, upTo6, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		for i, state := range []string{"PENDING", "DELIVERED", "FAILED"} {
			if _, err := db.W.Exec(`INSERT INTO banking_payment_webhooks (org_id, external_id, status, comment, event_time, attempts, next_at, delivered_at, last_error, state, client_id)
				VALUES ('org1', $1, 'IMPLEMENTED', 'c', 5, $2, 7, $3, 'e', $4, 'p1')`, "old-"+state, i, int64(100+i), state); err != nil {
				t.Fatal(err)
			}
		}
		var maxBefore int64
		if err := db.W.QueryRow(`SELECT MAX(id) FROM banking_payment_webhooks`).Scan(&maxBefore); err != nil {
			t.Fatal(err)
		}
		if err := MigratePayments(ctx, db); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := db.R.QueryRow(`SELECT COUNT(*) FROM banking_payment_webhooks WHERE org_id = 'org1' AND status = 'IMPLEMENTED' AND comment = 'c'
			AND event_time = 5 AND next_at = 7 AND delivered_at >= 100 AND last_error = 'e' AND client_id = 'p1' AND id <= $1`, maxBefore).Scan(&n); err != nil || n != 3 {
			t.Fatalf("%d of 3 rows kept whole, %v", n, err)
		}
		s := NewPaymentStore(db)
		at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
		var hist []banking.StatusChange
		for _, st := range banking.ProcessingPath {
			hist = append(hist, banking.StatusChange{Status: st, At: at})
		}
		if err := s.CreatePayment(ctx, storedPayment("org1", "new"), hist); err != nil {
			t.Fatal(err)
		}
		if err := s.materializeOutbox(ctx); err != nil {
			t.Fatal(err)
		}
		var id int64
		if err := db.R.QueryRow(`SELECT id FROM banking_payment_webhooks WHERE external_id = 'new'`).Scan(&id); err != nil || id <= maxBefore {
			t.Fatalf("new row's id %d after %d, %v", id, maxBefore, err)
		}
		due, err := s.DueWebhooks(ctx, at.Add(time.Hour), 10, false)
		if err != nil {
			t.Fatal(err)
		}
		var dueIDs []string
		for _, ev := range due {
			dueIDs = append(dueIDs, ev.ExternalID)
		}
		if strings.Join(dueIDs, ",") != "old-PENDING,new" {
			t.Fatalf("due after the migration: %v", dueIDs)
		}
		ds, err := s.PartnerDeliveries(ctx, "p1", 10)
		if err != nil || len(ds) != 3 {
			t.Fatalf("p1's deliveries: %+v %v", ds, err)
		}
	})
}
