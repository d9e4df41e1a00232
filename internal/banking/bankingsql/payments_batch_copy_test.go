package bankingsql

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
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

// COPY stores every column of a document row exactly as the statement of
// arrays does: the same batch written both ways, into two schemas, reads
// back the same, for texts in Cyrillic and beyond the BMP, empty and at
// their longest (a purpose of 210 characters, a document near the 1 MiB
// body limit), amounts at BIGINT's extremes, instants before 1970 and far
// ahead, an update after the creation, and walked_at present (at the
// creation or later) or NULL.
func TestPaymentCopyMatchesStatement(t *testing.T) {
	at := time.Date(2026, 11, 29, 23, 30, 0, 123456000, time.UTC)
	row := func(id string, edit func(sp *banking.StoredPayment)) *banking.StoredPayment {
		sp := storedPayment("org1", id)
		sp.Status, sp.Roles = banking.StatusImplemented, []banking.SignatureRole{"SOLE"}
		edit(sp)
		return sp
	}
	walked := func(sp *banking.StoredPayment, doc string, at time.Time) *newPayment {
		if doc == "" {
			doc = docOf(t, sp)
		}
		return newWalkedPayment(sp, doc, at)
	}
	batch := []*newPayment{
		walked(row("plain", func(*banking.StoredPayment) {}), "", at),
		walked(row("Unicode-Key", func(sp *banking.StoredPayment) {
			sp.OrgID = "организация-😀"
			sp.Comment = "Исполнен ✓ — «ок» 😀 e\u0301 \t\n\\ \" '"
			sp.Doc.Purpose = strings.Repeat("Щ", 209) + "😀"
			sp.Channel = "API:партнёр"
		}), "", at),
		walked(row("empty", func(sp *banking.StoredPayment) {
			sp.Comment, sp.Roles, sp.Channel, sp.Status = "", nil, "", ""
		}), "", at),
		walked(row("max-amount", func(sp *banking.StoredPayment) { sp.Kopecks = math.MaxInt64 }), "", at),
		walked(row("min-amount", func(sp *banking.StoredPayment) { sp.Kopecks = math.MinInt64 }), "", at),
		walked(row("zero-amount", func(sp *banking.StoredPayment) { sp.Kopecks = 0 }), "", at),
		walked(row("before-1970", func(sp *banking.StoredPayment) {
			sp.CreatedAt = time.Date(1969, 12, 31, 23, 59, 59, 999999000, time.UTC)
			sp.UpdatedAt = sp.CreatedAt
		}), "", time.Date(1900, 1, 1, 0, 0, 0, 1000, time.UTC)),
		walked(row("far-ahead", func(sp *banking.StoredPayment) {
			sp.CreatedAt = time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC)
			sp.UpdatedAt = sp.CreatedAt.Add(time.Microsecond)
		}), "", at),
		walked(row("walked-at-creation", func(sp *banking.StoredPayment) { sp.CreatedAt, sp.UpdatedAt = at, at }), "", at),
		walked(row("large-doc", func(*banking.StoredPayment) {}), `{"purpose":"`+strings.Repeat("Я", 1<<19-16)+`"}`, at),
		// A row without a walk and without history (walked_at NULL) is
		// copied too.
		newPaymentOf(row("no-walk", func(sp *banking.StoredPayment) { sp.Status = banking.StatusCreated }), `{}`, nil),
	}
	if !rowsOnly(batch) {
		t.Fatal("the batch would not be copied")
	}
	ctx := context.Background()
	read := func(db *sqldb.DB) []string {
		rs, err := db.R.QueryContext(ctx, `SELECT org_id, external_id, kind, doc, kopecks, status, comment, roles, channel, created_at, updated_at, walked_at
			FROM banking_payments ORDER BY org_id, external_id`)
		if err != nil {
			t.Fatal(err)
		}
		defer rs.Close()
		var out []string
		for rs.Next() {
			var org, ext, kind, doc, status, comment, roles, channel string
			var kopecks, created, updated int64
			var walkedAt sql.NullInt64
			if err := rs.Scan(&org, &ext, &kind, &doc, &kopecks, &status, &comment, &roles, &channel, &created, &updated, &walkedAt); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%q %q %q %q %d %q %q %q %q %d %d %v", org, ext, kind, doc, kopecks, status, comment, roles, channel, created, updated, walkedAt))
		}
		if err := rs.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	copied, statement := storetest.Postgres(t), storetest.Postgres(t)
	for _, db := range []*sqldb.DB{copied, statement} {
		if err := MigratePayments(ctx, db); err != nil {
			t.Fatal(err)
		}
	}
	if err := copyPayments(ctx, copied.W, batch); err != nil {
		t.Fatal(err)
	}
	outcomes, err := writePaymentBatchPostgres(ctx, statement.W, batch)
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range outcomes {
		if o != nil {
			t.Fatalf("statement: %s: %v", batch[i].key, o)
		}
	}
	got, want := read(copied), read(statement)
	if len(got) != len(batch) || len(want) != len(batch) {
		t.Fatalf("%d rows copied, %d by the statement, of %d", len(got), len(want), len(batch))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("copied row differs:\n got %.300s\nwant %.300s", got[i], want[i])
		}
	}
}
