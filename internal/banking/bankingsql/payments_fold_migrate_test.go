package bankingsql

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// Migration 0013 on a database filled in the shape releases before folded
// keys left it: documents keyed by the partner's mixed-case text, with
// their history and webhook rows, beside one created since in lower case.
// A key that folds without meeting another is folded in every table, so
// the document is found, advanced and refused as a duplicate by any case
// and its webhook still carries the partner's text; a key that would meet
// another document's is left, listed in banking_payment_unfolded_keys, and
// still finds its own document by its exact text.
func TestFoldExternalIDsMigration(t *testing.T) {
	upTo12 := func(ctx context.Context, db *sqldb.DB) error {
		return db.Migrate(ctx, "banking_payments", areaMigrationsUpTo(t, "payments", 12))
	}
	const (
		folds    = "5A000000-0000-4000-8000-0000000000AB" // alone: folded
		taken    = "5B000000-0000-4000-8000-0000000000AB" // its folded form was created since
		twinUp   = "5C000000-0000-4000-8000-0000000000Ab" // two keys differing in case only
		twinDown = "5C000000-0000-4000-8000-0000000000aB"
		lower    = "5d000000-0000-4000-8000-0000000000ab" // already folded
	)
	at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	storetest.Each(t, upTo12, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		// Each document has its own kopecks and purpose, so a look-up shows
		// which document it found and their digests differ.
		docs := []struct {
			org, key string
			kopecks  int64
		}{
			{"org1", folds, 1}, {"org2", folds, 2}, {"org1", taken, 3}, {"org1", strings.ToLower(taken), 4},
			{"org1", twinUp, 5}, {"org1", twinDown, 6}, {"org1", lower, 7},
		}
		for _, d := range docs {
			if _, err := db.W.Exec(`INSERT INTO banking_payments (org_id, external_id, kind, doc, kopecks, status, comment, roles, channel, created_at, updated_at)
				VALUES ($1, $2, 'PAY_DOC_RU', $3, $4, 'CREATED', '', '', 'API:p1', 1, 1)`, d.org, d.key,
				fmt.Sprintf(`{"externalId":%q,"purpose":"document %d"}`, d.key, d.kopecks), d.kopecks); err != nil {
				t.Fatal(err)
			}
			if _, err := db.W.Exec(`INSERT INTO banking_payment_history (org_id, external_id, status, comment, at) VALUES ($1, $2, 'CREATED', '', 1)`, d.org, d.key); err != nil {
				t.Fatal(err)
			}
		}
		for _, key := range []string{folds, twinUp} {
			if _, err := db.W.Exec(`INSERT INTO banking_payment_webhooks (org_id, external_id, status, comment, event_time, next_at, client_id)
				VALUES ('org1', $1, 'REFUSEDBYBANK', '', 1, 1, 'p1')`, key); err != nil {
				t.Fatal(err)
			}
		}
		if err := MigratePayments(ctx, db); err != nil {
			t.Fatal(err)
		}

		left, err := UnfoldedPaymentKeys(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, k := range left {
			got = append(got, k.OrgID+"/"+k.ExternalID)
		}
		if want := []string{"org1/" + taken, "org1/" + twinUp, "org1/" + twinDown}; !sameStrings(got, want) {
			t.Fatalf("unfolded keys %v, want %v", got, want)
		}
		var keys []string
		rows, err := db.R.Query(`SELECT org_id || '/' || external_id FROM banking_payments UNION ALL
			SELECT 'history ' || org_id || '/' || external_id FROM banking_payment_history UNION ALL
			SELECT 'webhook ' || org_id || '/' || external_id || ' ' || COALESCE(sent_external_id, '-') FROM banking_payment_webhooks`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var k string
			if err := rows.Scan(&k); err != nil {
				t.Fatal(err)
			}
			keys = append(keys, k)
		}
		rows.Close()
		var want []string
		for _, d := range docs {
			k := d.org + "/" + d.key
			if d.key == folds {
				k = d.org + "/" + strings.ToLower(d.key)
			}
			want = append(want, k, "history "+k)
		}
		want = append(want, "webhook org1/"+strings.ToLower(folds)+" "+folds, "webhook org1/"+twinUp+" -")
		if !sameStrings(keys, want) {
			t.Fatalf("keys after the migration:\n%s\nwant:\n%s", strings.Join(keys, "\n"), strings.Join(want, "\n"))
		}

		s := NewPaymentStore(db)
		for _, tc := range []struct {
			org, id string
			kopecks int64 // of the document found
		}{
			{"org1", folds, 1}, {"org1", strings.ToLower(folds), 1}, {"org2", strings.ToLower(folds), 2},
			{"org1", taken, 3}, {"org1", strings.ToLower(taken), 4},
			{"org1", twinUp, 5}, {"org1", twinDown, 6}, {"org1", lower, 7},
		} {
			sp, err := s.GetPayment(ctx, tc.org, tc.id)
			if err != nil || sp.Kopecks != tc.kopecks {
				t.Errorf("%s/%s found %+v %v, want the document of %d kopecks", tc.org, tc.id, sp, err, tc.kopecks)
			}
		}
		// A state read of each of a pair left unfolded answers its own
		// document's digest, the second time from the cache too.
		for range 2 {
			for _, id := range []string{strings.ToLower(taken), taken} {
				sp, _ := s.GetPayment(ctx, "org1", id)
				st, err := s.PaymentState(ctx, "org1", id, banking.DigestFormat{})
				if err != nil || st.CrucialFieldsHash != banking.CrucialFieldsHash(&sp.Doc) {
					t.Fatalf("state of %s: %+v %v, want the digest of %s", id, st, err, sp.Doc.Purpose)
				}
			}
		}
		// Signing one of the pair moves that document alone.
		if _, err := s.AdvancePayment(ctx, "org1", taken, banking.StatusCreated, nil,
			[]banking.StatusChange{{Status: banking.StatusPartSigned, At: at}}); err != nil {
			t.Fatal(err)
		}
		for id, want := range map[string]string{taken: banking.StatusPartSigned, strings.ToLower(taken): banking.StatusCreated} {
			if sp, err := s.GetPayment(ctx, "org1", id); err != nil || sp.Status != want {
				t.Fatalf("%s after signing %s: %+v %v, want %s", id, taken, sp, err, want)
			}
			if h, err := s.PaymentHistory(ctx, "org1", id); err != nil || len(h) != map[string]int{banking.StatusPartSigned: 2, banking.StatusCreated: 1}[want] {
				t.Fatalf("history of %s: %+v %v", id, h, err)
			}
		}
		// The folded document is one document whatever the case.
		if err := s.CreatePayment(ctx, storedPayment("org1", strings.ToLower(folds)), []banking.StatusChange{{Status: banking.StatusCreated, At: at}}); banking.KindOf(err) != banking.KindWorkflow {
			t.Fatalf("a create of the folded id: %v, want a duplicate", err)
		}
		if _, err := s.AdvancePayment(ctx, "org1", strings.ToLower(folds), banking.StatusCreated, nil,
			[]banking.StatusChange{{Status: banking.StatusPartSigned, At: at}}); err != nil {
			t.Fatal(err)
		}
		if h, err := s.PaymentHistory(ctx, "org1", folds); err != nil || len(h) != 2 || h[1].Status != banking.StatusPartSigned {
			t.Fatalf("history of the folded document: %+v %v", h, err)
		}
		evs, err := s.DueWebhooks(ctx, at, 10, false)
		if err != nil {
			t.Fatal(err)
		}
		var sent []string
		for _, ev := range evs {
			sent = append(sent, ev.ExternalID)
		}
		if !sameStrings(sent, []string{folds, twinUp}) {
			t.Fatalf("webhooks carry %v, want the partner's texts", sent)
		}
	})
}

// sameStrings reports whether a and b hold the same strings in any order.
func sameStrings(a, b []string) bool {
	a, b = append([]string(nil), a...), append([]string(nil), b...)
	sort.Strings(a)
	sort.Strings(b)
	return strings.Join(a, "\n") == strings.Join(b, "\n")
}
