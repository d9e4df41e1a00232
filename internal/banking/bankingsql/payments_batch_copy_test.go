package bankingsql

import (
	"context"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/storetest"
)

// On PostgreSQL a batch of walked documents is copied; one that meets an
// existing key is written again by the statement of arrays, so the others
// are stored exactly as the statement stores them and only the duplicate
// fails, with its own WORKFLOW_FAULT. A batch with history rows is never
// copied.
func TestPaymentBatchCopyPostgres(t *testing.T) {
	at := time.Date(2026, 11, 29, 23, 30, 0, 0, time.UTC)
	walked := func(id string) *newPayment {
		sp := storedPayment("org1", id)
		sp.Status, sp.Roles = banking.StatusImplemented, []banking.SignatureRole{"SOLE"}
		return newWalkedPayment(sp, docOf(t, sp), at)
	}
	draft := func(id string) *newPayment {
		sp := storedPayment("org1", id)
		return newPaymentOf(sp, docOf(t, sp), []banking.StatusChange{{Status: banking.StatusCreated, At: at}})
	}
	cases := []struct {
		name   string
		batch  []*newPayment
		copies bool   // rowsOnly: the batch goes to COPY first
		failed []bool // outcomes that are WORKFLOW_FAULT
	}{
		{"walked documents", []*newPayment{walked("w1"), walked("W2"), walked("w3")}, true, []bool{false, false, false}},
		{"walked and a draft", []*newPayment{walked("m1"), draft("m2")}, false, []bool{false, false}},
		{"existing key", []*newPayment{walked("x1"), walked("TAKEN"), walked("x2")}, true, []bool{false, true, false}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db := storetest.Postgres(t)
			ctx := context.Background()
			if err := MigratePayments(ctx, db); err != nil {
				t.Fatal(err)
			}
			if err := NewPaymentStore(db).CreateProcessed(ctx, walked("taken").sp, at); err != nil {
				t.Fatal(err)
			}
			if got := rowsOnly(c.batch); got != c.copies {
				t.Fatalf("rowsOnly: %v", got)
			}
			outcomes, err := writePaymentBatchPool(ctx, db.W, c.batch)
			if err != nil {
				t.Fatal(err)
			}
			for i, p := range c.batch {
				if failed := banking.KindOf(outcomes[i]) == banking.KindWorkflow; failed != c.failed[i] || (!failed && outcomes[i] != nil) {
					t.Fatalf("outcome of %s: %v", p.key, outcomes[i])
				}
				if !c.failed[i] {
					if got, want := storedColumns(t, db.R, p.key), wantColumns(p); got != want {
						t.Errorf("row of %s:\n got %s\nwant %s", p.key, got, want)
					}
				}
			}
			var history int
			if err := db.R.QueryRowContext(ctx, `SELECT COUNT(*) FROM banking_payment_history`).Scan(&history); err != nil {
				t.Fatal(err)
			}
			want := 0
			for _, p := range c.batch {
				want += len(p.history)
			}
			if history != want {
				t.Errorf("history rows: %d, want %d", history, want)
			}
		})
	}
}
