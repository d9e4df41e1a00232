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
// bound once per statement, and with its organisation too when the batch
// has one and every document was walked when it was created; any other
// batch with twelve values a row. Every shape stores every column as the
// document has it, and the shared shapes find an existing key as the other
// does.
func TestPaymentBatchSharedColumns(t *testing.T) {
	at := time.Date(2026, 11, 29, 9, 30, 0, 0, time.UTC)
	walked := func(id string) func() *newPayment {
		return func() *newPayment {
			sp := storedPayment("org1", id)
			sp.Status, sp.Roles = banking.StatusImplemented, []banking.SignatureRole{"SOLE"}
			return newWalkedPayment(sp, docOf(t, sp), at)
		}
	}
	// walkedNow is walked at its creation, as a sole-signed create is.
	walkedNow := func(org, id string) func() *newPayment {
		return func() *newPayment {
			sp := storedPayment(org, id)
			sp.Status, sp.Roles = banking.StatusImplemented, []banking.SignatureRole{"SOLE"}
			return newWalkedPayment(sp, docOf(t, sp), sp.CreatedAt)
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
	const six, twelve = sharedPaymentsHead, paymentsHead
	cases := []struct {
		name   string
		batch  []func() *newPayment
		shape  string // the head of the document rows' statements
		failed []bool // outcomes that are WORKFLOW_FAULT
	}{
		{"walked documents", []func() *newPayment{walked("w1"), walked("w2"), walked("w3")}, six, []bool{false, false, false}},
		{"walked at creation", []func() *newPayment{walkedNow("org1", "n1"), walkedNow("org1", "n2")}, sharedWalkedHead, []bool{false, false}},
		{"walked at creation, two organisations", []func() *newPayment{walkedNow("org1", "o1"), walkedNow("org2", "o2")}, six, []bool{false, false}},
		{"walked at creation and later", []func() *newPayment{walkedNow("org1", "l1"), walked("l2")}, six, []bool{false, false}},
		{"drafts", []func() *newPayment{draft("d1"), draft("d2")}, six, []bool{false, false}},
		{"walked and drafts", []func() *newPayment{walked("m1"), draft("m2"), walked("m3")}, twelve, []bool{false, false, false}},
		{"updated after created", []func() *newPayment{touched("t1"), draft("t2")}, twelve, []bool{false, false}},
		{"existing key, shared", []func() *newPayment{walked("x1"), walked("taken"), walked("x2")}, six, []bool{false, true, false}},
		{"existing key, walked at creation", []func() *newPayment{walkedNow("org1", "z1"), walkedNow("org1", "taken"), walkedNow("org1", "z2")}, sharedWalkedHead, []bool{false, true, false}},
		{"existing key, twelve values", []func() *newPayment{walked("y1"), draft("taken"), walked("y2")}, twelve, []bool{false, true, false}},
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
			for _, head := range []string{sharedWalkedHead, six, twelve} {
				if got := usedShape(stmts, head); got != (head == c.shape) {
					t.Errorf("shape %.60q… used: %v, want %v", head[len(paymentsHead):], got, !got)
				}
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
