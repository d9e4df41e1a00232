package bankingsql

import (
	"context"
	"errors"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// Revoking a grant revokes every token of the chain, access and refresh,
// and leaves other chains alone; before, RFC 7009's cascade had nothing to
// call and a revoked refresh token's access tokens lived their hour.
func TestIdentityRevokeGrant(t *testing.T) {
	storetest.Each(t, MigrateIdentity, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := NewIdentityStore(db)
		now := time.Unix(1_800_000_000, 0)
		tok := func(hash, kind, chain string) banking.Token {
			return banking.Token{Hash: hash, Kind: kind, ClientID: "c", OrgID: "o", UserID: "u", Chain: chain,
				ExpiresAt: now.Add(time.Hour)}
		}
		if err := s.SaveTokens(ctx, tok("a1", banking.TokenAccess, "g1"), tok("r1", banking.TokenRefresh, "g1"),
			tok("a2", banking.TokenAccess, "g1"), tok("r2", banking.TokenRefresh, "g1"),
			tok("a3", banking.TokenAccess, "g2"), tok("r3", banking.TokenRefresh, "g2")); err != nil {
			t.Fatal(err)
		}
		// Read once, so a stale cached row would show.
		for _, h := range []string{"a1", "a2", "r1", "r2", "a3"} {
			if _, err := s.GetToken(ctx, h); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.RevokeGrant(ctx, "r2", now); err != nil {
			t.Fatal(err)
		}
		for h, revoked := range map[string]bool{"a1": true, "r1": true, "a2": true, "r2": true, "a3": false, "r3": false} {
			got, err := s.GetToken(ctx, h)
			if err != nil {
				t.Fatal(err)
			}
			if got.RevokedAt.IsZero() == revoked {
				t.Errorf("%s: revoked at %v, want revoked %v", h, got.RevokedAt, revoked)
			}
		}
		if err := s.RevokeGrant(ctx, "nope", now); !errors.Is(err, banking.ErrNotFound) {
			t.Fatalf("unknown token: %v", err)
		}
	})
}
