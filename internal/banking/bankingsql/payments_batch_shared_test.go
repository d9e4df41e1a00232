package bankingsql

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/storetest"
)

// A SQLite batch whose documents agree on kind, status, comment, roles and
// channel, each updated when it was created, is inserted with those values
// bound once per statement; any other batch with twelve values a row. Both
// store every column as the document has it, and the shared shape finds an
// existing key as the other does.
func TestPaymentBatchSharedColumns(t *testing.T) {
	at := time.Date(2026, 11, 29, 9, 30, 0, 0, time.UTC)
	walked := func(id string) func() *newPayment {
		return func() *newPayment {
			sp := storedPayment("org1", id)
			sp.Status, sp.Roles = banking.StatusImplemented, []banking.SignatureRole{"SOLE"}
			return newWalkedPayment(sp, docOf(t, sp), at)
		}
	}
	draft := func(id string) func() *newPayment {
		return func() *newPayment {
			sp := storedPayment("org1", id)
			return newPaymentOf(sp, docOf(t, sp), []banking.StatusChange{{Status: banking.StatusCreated, At: at}})
		}
	}
	touched := func(id string) func() *newPayment {
		return func() *newPayment {
			sp := storedPayment("org1", id)
			sp.UpdatedAt = sp.CreatedAt.Add(time.Second)
			return newPaymentOf(sp, docOf(t, sp), []banking.StatusChange{{Status: banking.StatusCreated, At: at}})
		}
	}
	cases := []struct {
		name   string
		batch  []func() *newPayment
		shared bool
		failed []bool // outcomes that are WORKFLOW_FAULT
	}{
		{"walked documents", []func() *newPayment{walked("w1"), walked("w2"), walked("w3")}, true, []bool{false, false, false}},
		{"drafts", []func() *newPayment{draft("d1"), draft("d2")}, true, []bool{false, false}},
		{"walked and drafts", []func() *newPayment{walked("m1"), draft("m2"), walked("m3")}, false, []bool{false, false, false}},
		{"updated after created", []func() *newPayment{touched("t1"), draft("t2")}, false, []bool{false, false}},
		{"existing key, shared", []func() *newPayment{walked("x1"), walked("taken"), walked("x2")}, true, []bool{false, true, false}},
		{"existing key, twelve values", []func() *newPayment{walked("y1"), draft("taken"), walked("y2")}, false, []bool{false, true, false}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db := storetest.SQLite(t)
			ctx := context.Background()
			if err := MigratePayments(ctx, db); err != nil {
				t.Fatal(err)
			}
			s := NewPaymentStore(db)
			if err := s.CreateProcessed(ctx, walked("taken")().sp, at); err != nil {
				t.Fatal(err)
			}
			var batch []*newPayment
			for _, make := range c.batch {
				batch = append(batch, make())
			}
			// Statements of its own, so the shapes the batch used are
			// the ones it built.
			stmts := &batchStatements{db: db}
			var outcomes []error
			if err := db.Tx(ctx, func(tx *sql.Tx) error {
				var err error
				outcomes, err = writePayments(stmts)(ctx, tx, batch)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			for i, p := range batch {
				if failed := banking.KindOf(outcomes[i]) == banking.KindWorkflow; failed != c.failed[i] || (!failed && outcomes[i] != nil) {
					t.Fatalf("outcome of %s: %v", p.key, outcomes[i])
				}
				if !c.failed[i] {
					if got, want := storedColumns(t, db.R, p.key), wantColumns(p); got != want {
						t.Errorf("row of %s:\n got %s\nwant %s", p.key, got, want)
					}
				}
			}
			if got := usedShape(stmts, sharedPaymentsHead); got != c.shared {
				t.Errorf("shared shape used: %v, want %v", got, c.shared)
			}
		})
	}
}

func docOf(t *testing.T, sp *banking.StoredPayment) string {
	t.Helper()
	doc, err := json.Marshal(sp.Doc)
	if err != nil {
		t.Fatal(err)
	}
	return string(doc)
}

// storedColumns prints every column of the document row keyed key.
func storedColumns(t *testing.T, r *sql.DB, key string) string {
	t.Helper()
	var org, ext, kind, doc, status, comment, roles, channel string
	var kopecks, created, updated int64
	var walkedAt sql.NullInt64
	if err := r.QueryRow(`SELECT org_id, external_id, kind, doc, kopecks, status, comment, roles, channel, created_at, updated_at, walked_at
		FROM banking_payments WHERE external_id = $1`, key).Scan(&org, &ext, &kind, &doc, &kopecks, &status, &comment, &roles, &channel, &created, &updated, &walkedAt); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(org, ext, kind, doc, kopecks, status, comment, roles, channel, created, updated, walkedAt)
}

// wantColumns prints the row p should be stored as.
func wantColumns(p *newPayment) string {
	walkedAt := sql.NullInt64{}
	if p.walkedAt != nil {
		walkedAt = sql.NullInt64{Int64: p.walkedAt.(int64), Valid: true}
	}
	sp := p.sp
	return fmt.Sprint(sp.OrgID, p.key, string(sp.Kind), p.doc, sp.Kopecks, sp.Status, sp.Comment, p.roles, sp.Channel,
		micros(sp.CreatedAt), micros(sp.UpdatedAt), walkedAt)
}

// usedShape reports whether some statement of head has been built.
func usedShape(c *batchStatements, head string) bool {
	found := false
	c.m.Range(func(k, _ any) bool {
		found = k.(batchKey).head == head
		return !found
	})
	return found
}
