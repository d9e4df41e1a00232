package bankingsql

import (
	"context"
	"io/fs"
	"testing"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// areaMigrationsUpTo is the area's migrations numbered at most last.
func areaMigrationsUpTo(t *testing.T, area string, last int) fs.FS {
	t.Helper()
	sub, err := fs.Sub(migrations, "migrations/"+area)
	if err != nil {
		t.Fatal(err)
	}
	out, err := sqldb.MigrationsUpTo(sub, last)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Identity migration 0002 gives the users made before it the signing
// method Token: they sign with certificates, so they may not confirm by QR
// outside the sandbox until made OneTimePassword.
func TestSigningMethodMigration(t *testing.T) {
	upTo1 := func(ctx context.Context, db *sqldb.DB) error {
		return db.Migrate(ctx, "banking_identity", areaMigrationsUpTo(t, "identity", 1))
	}
	storetest.Each(t, upTo1, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		if _, err := db.W.Exec(`INSERT INTO banking_orgs (id, name, full_name, inn, kpp, ogrn) VALUES ('org1', 'A', 'A', '7707083893', '', '')`); err != nil {
			t.Fatal(err)
		}
		if _, err := db.W.Exec(`INSERT INTO banking_users (id, org_id, login, name, email, password_hash) VALUES ('old', 'org1', 'old', 'Old', '', '')`); err != nil {
			t.Fatal(err)
		}
		if err := MigrateIdentity(ctx, db); err != nil {
			t.Fatal(err)
		}
		s := NewIdentityStore(db)
		if u, err := s.GetUser(ctx, "old"); err != nil || u.SigningMethod != banking.SigningToken {
			t.Fatalf("migrated user %+v %v", u, err)
		}
	})
}

// Payments migration 0011 leaves the attempts logged before it without a
// format (unknown, not guessed), and they still read back.
func TestWebhookLogFormatMigration(t *testing.T) {
	upTo10 := func(ctx context.Context, db *sqldb.DB) error {
		return db.Migrate(ctx, "banking_payments", areaMigrationsUpTo(t, "payments", 10))
	}
	storetest.Each(t, upTo10, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		if _, err := db.W.Exec(`INSERT INTO banking_payment_webhook_log (webhook_id, attempt, at, http_status, error) VALUES (42, 1, 5, 503, '')`); err != nil {
			t.Fatal(err)
		}
		if err := MigratePayments(ctx, db); err != nil {
			t.Fatal(err)
		}
		log, err := NewPaymentStore(db).WebhookLog(ctx, 42)
		if err != nil || len(log) != 1 || log[0].HTTPStatus != 503 || log[0].Format != "" {
			t.Fatalf("old attempt %+v %v", log, err)
		}
	})
}

// Cards migration 0003 starts an organisation that already has limit
// applications after their count, as its next application would be
// numbered, so a number the bank gives after the upgrade is none it gave
// (in count) before.
func TestCardLimitNumbersMigration(t *testing.T) {
	upTo2 := func(ctx context.Context, db *sqldb.DB) error {
		return db.Migrate(ctx, "banking_cards", areaMigrationsUpTo(t, "cards", 2))
	}
	storetest.Each(t, upTo2, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := NewCardStore(db)
		if err := banking.SeedSandboxCards(ctx, s, "org", "app", "044525225", []string{"A1"}, nil); err != nil {
			t.Fatal(err)
		}
		for _, ext := range []string{"e1", "e2"} {
			if _, err := db.W.Exec(`INSERT INTO banking_card_limits (org_id, external_id, partner_id, card_id, code, amount, doc_date,
				doc_number, signatures, bank_status, bank_comment, channel_info, created_at, expires_at)
				VALUES ('org', $1, 'app', 'sbc-00001', 'NON_RENEW', '1.00', '2026-03-10', '', 'null', 'CREATED', '', 'API', 1, 0)`, ext); err != nil {
				t.Fatal(err)
			}
		}
		if err := MigrateCards(ctx, db); err != nil {
			t.Fatal(err)
		}
		l := banking.LimitChange{OrgID: "org", PartnerID: "app", BusinessCardID: "sbc-00001", Code: "NON_RENEW", ExternalID: "e3",
			Limit: "1.00", BankStatus: banking.LimitCreated, ChannelInfo: "API"}
		if n, err := s.CreateLimit(ctx, l); err != nil || n != "3" {
			t.Fatalf("first application after the migration: number %q, %v; want 3", n, err)
		}
	})
}
