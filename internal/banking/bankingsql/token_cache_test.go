package bankingsql

import (
	"context"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// The token cache must never outlive a revocation made in this process,
// whichever IdentityStore makes it, and must keep serving a token within
// its TTL when the database is not asked (that is what it is for).
func TestTokenCacheRevocation(t *testing.T) {
	storetest.Each(t, MigrateIdentity, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		now := time.Now()
		api, cli := NewIdentityStore(db), NewIdentityStore(db)
		tok := banking.Token{Hash: "cache-me", Kind: banking.TokenAccess, ClientID: "c", OrgID: "o", UserID: "u", Scopes: []string{"A"}, ExpiresAt: now.Add(time.Hour)}
		if err := api.SaveTokens(ctx, tok); err != nil {
			t.Fatal(err)
		}
		if got, err := api.GetToken(ctx, tok.Hash); err != nil || !got.RevokedAt.IsZero() {
			t.Fatalf("first read: %+v %v", got, err)
		}
		// A revocation through another store of the process is seen at once.
		if err := cli.RevokeToken(ctx, tok.Hash, now); err != nil {
			t.Fatal(err)
		}
		if got, err := api.GetToken(ctx, tok.Hash); err != nil || got.RevokedAt.IsZero() {
			t.Fatalf("after revoke: %+v %v", got, err)
		}
		// A change behind the cache's back (another process) is served from
		// the cache until the TTL ends, then read again.
		if _, err := db.W.ExecContext(ctx, `UPDATE banking_tokens SET scopes = 'B' WHERE hash = $1`, tok.Hash); err != nil {
			t.Fatal(err)
		}
		if got, _ := api.GetToken(ctx, tok.Hash); got.Scopes[0] != "A" {
			t.Fatalf("cached read went to the database: %+v", got)
		}
		time.Sleep(readCacheTTL + 50*time.Millisecond)
		if got, _ := api.GetToken(ctx, tok.Hash); got.Scopes[0] != "B" {
			t.Fatalf("read after the TTL: %+v", got)
		}
		// Unknown tokens are not cached: one saved afterwards works at once.
		if _, err := api.GetToken(ctx, "later"); err == nil {
			t.Fatal("unknown token found")
		}
		if err := cli.SaveTokens(ctx, banking.Token{Hash: "later", Kind: banking.TokenAccess, ExpiresAt: now.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		if _, err := api.GetToken(ctx, "later"); err != nil {
			t.Fatalf("token saved after a miss: %v", err)
		}
	})
}

// Organisations are read through the cache (every create compares its
// payer's INN with its organisation's), and an unknown one is not cached, so
// one added after a miss is found at once.
func TestOrgCache(t *testing.T) {
	storetest.Each(t, MigrateIdentity, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		api, cli := NewIdentityStore(db), NewIdentityStore(db)
		if _, err := api.GetOrg(ctx, "org-later"); err == nil {
			t.Fatal("unknown organisation found")
		}
		if err := insertOrg(ctx, db.W, banking.Organisation{ID: "org-later", Name: "ООО Позже", INN: "7707083893"}, ""); err != nil {
			t.Fatal(err)
		}
		got, err := api.GetOrg(ctx, "org-later")
		if err != nil || got.INN != "7707083893" {
			t.Fatalf("organisation added after a miss: %+v %v", got, err)
		}
		// The row is now served from the cache: a change behind its back is
		// not seen within the TTL (the stores never change one).
		if _, err := db.W.ExecContext(ctx, `UPDATE banking_orgs SET inn = '7736050003' WHERE id = 'org-later'`); err != nil {
			t.Fatal(err)
		}
		if got, _ := cli.GetOrg(ctx, "org-later"); got.INN != "7707083893" {
			t.Fatalf("cached read went to the database: %+v", got)
		}
	})
}
