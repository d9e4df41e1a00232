package bankingsql

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// A SQLite batch is cut into statements of a few fixed sizes: powers of two
// up to 256, largest first.
func TestBatchStatementSizes(t *testing.T) {
	cases := []struct {
		rows int
		want []int
	}{
		{1, []int{1}},
		{7, []int{4, 2, 1}},
		{44, []int{32, 8, 4}},
		{256, []int{256}},
		{300, []int{256, 32, 8, 4}},
		{1200, []int{256, 256, 256, 256, 128, 32, 16}},
	}
	for _, c := range cases {
		var got []int
		for n := c.rows; n > 0; {
			size := rowsPerStatement(n)
			got, n = append(got, size), n-size
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%d rows: statements of %v, want %v", c.rows, got, c.want)
		}
	}
}

// Once SQLite's one-row statements are prepared, creates through them
// store the document, its outbox row and its walk, and a second create with
// the same externalId still fails alone; PostgreSQL's one statement of
// arrays does the same.
func TestPaymentStorePreparedBatchStatements(t *testing.T) {
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := NewPaymentStore(db)
		at := time.Date(2026, 11, 23, 9, 30, 0, 0, time.UTC)
		walk := func() []banking.StatusChange {
			h := make([]banking.StatusChange, len(banking.ProcessingPath))
			for j, st := range banking.ProcessingPath {
				h[j] = banking.StatusChange{Status: st, At: at}
			}
			return h
		}
		if err := s.CreatePayment(ctx, storedPayment("org1", "first"), walk()); err != nil {
			t.Fatal(err)
		}
		if db.Dialect == sqldb.SQLite {
			// The first batch ran unprepared; wait for its shape to be
			// prepared (the bound only keeps a broken build from hanging).
			// A walked document writes no outbox row on SQLite; its
			// columns shared with its batch are bound once
			// (payments_batch_shared.go).
			giveUp := time.Now().Add(time.Minute)
			for _, head := range []string{sharedPaymentsHead} {
				for !preparedShape(s.batches, head) {
					if time.Now().After(giveUp) {
						t.Fatalf("statement %q never prepared", head)
					}
					time.Sleep(time.Millisecond)
				}
			}
		}
		for i := range 3 {
			if err := s.CreatePayment(ctx, storedPayment("org1", fmt.Sprintf("next-%d", i)), walk()); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.CreatePayment(ctx, storedPayment("org1", "next-1"), walk()); banking.KindOf(err) != banking.KindWorkflow {
			t.Fatalf("duplicate through the prepared statement: %v", err)
		}
		if n := countRows(t, db, "banking_payments", "org1"); n != 4 {
			t.Fatalf("%d documents, want 4", n)
		}
		if n := countOutbox(t, s, "org1"); n != 4 {
			t.Fatalf("%d outbox rows, want 4", n)
		}
		if n := countMoves(t, db, "org1"); n != 4*len(banking.ProcessingPath) {
			t.Fatalf("%d moves, want %d", n, 4*len(banking.ProcessingPath))
		}
	})
}

// preparedShape reports whether the one-row statement of head is prepared.
func preparedShape(c *batchStatements, head string) bool {
	found := false
	c.m.Range(func(k, st any) bool {
		key := k.(batchKey)
		found = key.head == head && key.rows == 1 && st.(*batchStatement).prepared != nil
		return !found
	})
	return found
}

// A batch that meets an existing externalId answers that document alone
// with WORKFLOW_FAULT and writes the others with their outbox rows: the
// insert without RETURNING finds fewer rows written than the batch holds
// and runs again, from its savepoint, with RETURNING.
func TestPaymentBatchWithExistingKey(t *testing.T) {
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := NewPaymentStore(db)
		at := time.Date(2026, 11, 23, 9, 30, 0, 0, time.UTC)
		walk := func() []banking.StatusChange {
			h := make([]banking.StatusChange, len(banking.ProcessingPath))
			for j, st := range banking.ProcessingPath {
				h[j] = banking.StatusChange{Status: st, At: at}
			}
			return h
		}
		if err := s.CreatePayment(ctx, storedPayment("org1", "taken"), walk()); err != nil {
			t.Fatal(err)
		}
		var batch []*newPayment
		for _, id := range []string{"a", "taken", "b", "c"} {
			sp := storedPayment("org1", id)
			doc, err := json.Marshal(sp.Doc)
			if err != nil {
				t.Fatal(err)
			}
			batch = append(batch, newPaymentOf(sp, string(doc), walk()))
		}
		var outcomes []error
		err := db.Tx(ctx, func(tx *sql.Tx) error {
			var err error
			outcomes, err = writePayments(s.batches)(ctx, tx, batch)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range []bool{true, false, true, true} {
			if ok := outcomes[i] == nil; ok != want {
				t.Fatalf("outcome of %s: %v", batch[i].sp.Doc.ExternalID, outcomes[i])
			}
		}
		if banking.KindOf(outcomes[1]) != banking.KindWorkflow {
			t.Fatalf("existing key: %v, want WORKFLOW_FAULT", outcomes[1])
		}
		if n := countRows(t, db, "banking_payments", "org1"); n != 4 {
			t.Fatalf("%d documents, want 4", n)
		}
		if n := countOutbox(t, s, "org1"); n != 4 {
			t.Fatalf("%d outbox rows, want 4", n)
		}
	})
}
