package bankingsql

import (
	"context"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// Identity migrations 0003 and 0004 on rows made before them: a refresh
// token starts a chain of its own (named by its hash) and still refreshes,
// and an app's secret gets no expiry, so no partner's integration stops
// 40 days after an upgrade.
func TestIdentityChainAndSecretExpiryMigrations(t *testing.T) {
	upTo2 := func(ctx context.Context, db *sqldb.DB) error {
		return db.Migrate(ctx, "banking_identity", areaMigrationsUpTo(t, "identity", 2))
	}
	storetest.Each(t, upTo2, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		now := time.Unix(1_800_000_000, 0)
		if _, err := db.W.Exec(`INSERT INTO banking_apps (client_id, name, secret_hash, redirect_uris) VALUES ('old-app', 'Old', 'h', '')`); err != nil {
			t.Fatal(err)
		}
		if _, err := db.W.Exec(`INSERT INTO banking_tokens (hash, kind, client_id, org_id, user_id, scopes, expires_at) VALUES ('old-rt', 'refresh', 'old-app', 'o', 'u', 'openid', $1)`,
			now.Add(time.Hour).UnixNano()); err != nil {
			t.Fatal(err)
		}
		if err := MigrateIdentity(ctx, db); err != nil {
			t.Fatal(err)
		}
		s := NewIdentityStore(db)
		if a, err := s.GetApp(ctx, "old-app"); err != nil || !a.SecretExpiresAt.IsZero() {
			t.Fatalf("migrated app %+v %v", a, err)
		}
		if tok, err := s.GetToken(ctx, "old-rt"); err != nil || tok.Chain != "old-rt" {
			t.Fatalf("migrated token %+v %v", tok, err)
		}
		next := banking.Token{Hash: "new-rt", Kind: banking.TokenRefresh, ExpiresAt: now.Add(2 * time.Hour)}
		if _, err := s.RotateRefresh(ctx, "old-rt", now, now.Add(2*time.Hour), next); err != nil {
			t.Fatal(err)
		}
		if tok, err := s.GetToken(ctx, "new-rt"); err != nil || tok.Chain != "old-rt" {
			t.Fatalf("refreshed token %+v %v", tok, err)
		}
	})
}

// Identity migration 0005 on an app made before it: the app gets no scope
// list, so it stays unrestricted and its partner's authorize requests keep
// working after an upgrade; a list set afterwards holds.
func TestIdentityAppScopesMigration(t *testing.T) {
	upTo4 := func(ctx context.Context, db *sqldb.DB) error {
		return db.Migrate(ctx, "banking_identity", areaMigrationsUpTo(t, "identity", 4))
	}
	storetest.Each(t, upTo4, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		if _, err := db.W.Exec(`INSERT INTO banking_apps (client_id, name, secret_hash, redirect_uris, secret_expires_at) VALUES ('old-app', 'Old', 'h', 'https://old.example/cb', 0)`); err != nil {
			t.Fatal(err)
		}
		if err := MigrateIdentity(ctx, db); err != nil {
			t.Fatal(err)
		}
		s := NewIdentityStore(db)
		a, err := s.GetApp(ctx, "old-app")
		if err != nil || len(a.Scopes) != 0 || a.RedirectURIs[0] != "https://old.example/cb" {
			t.Fatalf("migrated app %+v %v", a, err)
		}
		if out := a.ScopesOutside([]string{"openid", banking.ScopePayDocRU, banking.ScopeBusinessCardLimit}); len(out) != 0 {
			t.Fatalf("migrated app refuses %q", out)
		}
		if err := s.SetAppScopes(ctx, "old-app", []string{"openid"}); err != nil {
			t.Fatal(err)
		}
		a, _ = s.GetApp(ctx, "old-app")
		if out := a.ScopesOutside([]string{"openid", banking.ScopePayDocRU}); len(out) != 1 || out[0] != banking.ScopePayDocRU {
			t.Fatalf("restricted app refuses %q", out)
		}
	})
}
