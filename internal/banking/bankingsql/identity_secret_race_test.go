package bankingsql

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// TestConcurrentClientSecretChanges races POST change-client-secret calls
// made with one current secret. The partner is told the new secret took
// (200) only by the change that stored it: were two to succeed, one of them
// would hold a secret that no longer authenticates and lock its partner out
// of the token endpoint. So exactly one change lands, the stored hash is its
// new one, and every other change is refused as made over a replaced secret.
func TestConcurrentClientSecretChanges(t *testing.T) {
	storetest.Each(t, MigrateIdentity, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := NewIdentityStore(db)
		const rounds, writers = 10, 8
		exp := time.Unix(1_800_000_000, 0)
		for r := range rounds {
			client := fmt.Sprintf("app-%d", r)
			if err := s.CreateApp(ctx, banking.PartnerApp{ClientID: client, Name: "N", SecretHash: "old"}); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			var mu sync.Mutex
			var won []string
			for i := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					next := fmt.Sprintf("new-%d", i)
					err := s.ChangeAppSecret(ctx, client, "old", next, exp)
					switch {
					case err == nil:
						mu.Lock()
						won = append(won, next)
						mu.Unlock()
					case !errors.Is(err, banking.ErrNotFound):
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			if len(won) != 1 {
				t.Fatalf("%s: %d of %d concurrent changes from one secret succeeded (%v), want 1", client, len(won), writers, won)
			}
			app, err := s.GetApp(ctx, client)
			if err != nil || app.SecretHash != won[0] {
				t.Fatalf("%s: stored hash %q (%v), want the winner's %q", client, app.SecretHash, err, won[0])
			}
		}
	})
}
