package bankingsql

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// TestCodeRedeemedWithItsTokens exchanges an authorization code through
// banking.Identity over the real store while the token table cannot take
// rows (renamed away, as a failed write would leave it). The exchange fails,
// and must leave the code as it was: a code used up with no tokens stored
// is a half-written grant, and the user would have to sign in again for a
// failure that was the bank's. Once the table is back the same code
// redeems, once, for a pair that authenticates. Concurrent redemptions of
// one code then still get exactly one pair.
func TestCodeRedeemedWithItsTokens(t *testing.T) {
	storetest.Each(t, MigrateIdentity, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s, _ := sandboxIdentity(t, db)
		id := banking.NewIdentity(s)
		code := func(c string) {
			t.Helper()
			if err := s.SaveCode(ctx, banking.AuthCode{Hash: banking.HashSecret(c), ClientID: banking.SandboxClientID, OrgID: banking.SandboxOrgID,
				UserID: banking.SandboxUserID, RedirectURI: banking.SandboxRedirectURI, Scopes: []string{banking.ScopeGetClientAccounts},
				ExpiresAt: time.Now().Add(time.Minute)}); err != nil {
				t.Fatal(err)
			}
		}
		exchange := func(c string) (banking.TokenPair, error) {
			return id.ExchangeCode(ctx, banking.SandboxClientID, c, banking.SandboxRedirectURI, "")
		}

		code("code-1")
		if _, err := db.W.ExecContext(ctx, `ALTER TABLE banking_tokens RENAME TO banking_tokens_away`); err != nil {
			t.Fatal(err)
		}
		_, failed := exchange("code-1")
		if _, err := db.W.ExecContext(ctx, `ALTER TABLE banking_tokens_away RENAME TO banking_tokens`); err != nil {
			t.Fatal(err)
		}
		if failed == nil {
			t.Fatal("exchange succeeded with no token table")
		}
		pair, err := exchange("code-1")
		if err != nil {
			t.Fatalf("the code was used up by an exchange that stored no tokens: %v", err)
		}
		if _, err := id.Authenticate(ctx, pair.AccessToken); err != nil {
			t.Fatalf("access token of the retried exchange: %v", err)
		}
		if _, err := exchange("code-1"); err == nil {
			t.Fatal("a redeemed code redeemed again")
		}

		code("code-2")
		var wg sync.WaitGroup
		var wins atomic.Int32
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := exchange("code-2"); err == nil {
					wins.Add(1)
				}
			}()
		}
		wg.Wait()
		if wins.Load() != 1 {
			t.Fatalf("%d concurrent exchanges of one code succeeded, want 1", wins.Load())
		}
	})
}
