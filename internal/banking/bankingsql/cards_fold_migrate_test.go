package bankingsql

import (
	"context"
	"strings"
	"testing"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// Cards migration 0006 on a database filled in the shape releases before
// folded keys left it: limit applications keyed by the partner's
// mixed-case externalId beside ones created since in lower case. A key
// that folds without meeting another is folded, so its application is
// found by any case and a second application with its UUID is refused as a
// duplicate; a key that would meet another application's is left, and the
// migration still runs.
func TestFoldLimitExternalIDsMigration(t *testing.T) {
	upTo5 := func(ctx context.Context, db *sqldb.DB) error {
		return db.Migrate(ctx, "banking_cards", areaMigrationsUpTo(t, "cards", 5))
	}
	const (
		folds    = "5A000000-0000-4000-8000-0000000000AB" // alone: folded
		taken    = "5B000000-0000-4000-8000-0000000000AB" // its folded form was created since
		twinUp   = "5C000000-0000-4000-8000-0000000000Ab" // two keys differing in case only
		twinDown = "5C000000-0000-4000-8000-0000000000aB"
	)
	storetest.Each(t, upTo5, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		// Each application has its own amount, so a look-up shows which
		// one it found.
		rows := []struct {
			org, key, amount string
		}{
			{"org1", folds, "1.00"}, {"org2", folds, "2.00"}, {"org1", taken, "3.00"}, {"org1", strings.ToLower(taken), "4.00"},
			{"org1", twinUp, "5.00"}, {"org1", twinDown, "6.00"},
		}
		for _, r := range rows {
			if _, err := db.W.Exec(`INSERT INTO banking_card_limits (org_id, external_id, partner_id, card_id, code, amount, doc_date,
				doc_number, signatures, bank_status, bank_comment, channel_info, created_at, expires_at, roles, exported_at)
				VALUES ($1, $2, 'p1', 'sbc-00001', 'NON_RENEW', $3, '2026-11-20', '1', 'null', 'CREATED', '', 'API', 1, 0, '', 0)`,
				r.org, r.key, r.amount); err != nil {
				t.Fatal(err)
			}
		}
		if err := MigrateCards(ctx, db); err != nil {
			t.Fatal(err)
		}
		s := NewCardStore(db)
		for _, tc := range []struct{ org, key, amount string }{
			{"org1", folds, "1.00"}, {"org1", strings.ToLower(folds), "1.00"}, {"org2", strings.ToLower(folds), "2.00"},
			{"org1", taken, "4.00"}, {"org1", strings.ToLower(taken), "4.00"},
		} {
			l, err := s.Limit(ctx, tc.org, tc.key)
			if err != nil || string(l.Limit) != tc.amount {
				t.Errorf("%s/%s: %s %v, want the application of %s", tc.org, tc.key, l.Limit, err, tc.amount)
			}
		}
		if err := s.InsertCard(ctx, banking.SandboxCard("org1", "044525225", "40702810000000000001", 0)); err != nil {
			t.Fatal(err)
		}
		dup := banking.LimitChange{OrgID: "org1", PartnerID: "p1", BusinessCardID: "sbc-00001", Code: banking.LimitCodeNonRenew,
			ExternalID: strings.ToLower(folds), Limit: "7.00", Date: "2026-12-02", BankStatus: banking.LimitCreated}
		if _, err := s.CreateLimit(ctx, dup); banking.KindOf(err) != banking.KindWorkflow {
			t.Errorf("second application with an old application's UUID: %v, want WORKFLOW_FAULT", err)
		}
		var n int
		if err := db.R.QueryRow(`SELECT COUNT(*) FROM banking_card_limits WHERE external_id IN ($1, $2)`, twinUp, twinDown).Scan(&n); err != nil || n != 2 {
			t.Errorf("keys differing in case only: %d left as they were (%v), want 2", n, err)
		}
	})
}
