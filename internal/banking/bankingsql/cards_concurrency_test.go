package bankingsql

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// TestConcurrentLimitApplications sends one limit application (one
// externalId, spelled in upper and lower case, as a partner retrying it
// might) from many goroutines at once. Exactly one is stored; every other
// gets the workflow error that the API answers 400, never a store failure
// that would be a 500, and a retry must not add a second application that
// could put a second limit in force.
func TestConcurrentLimitApplications(t *testing.T) {
	storetest.Each(t, MigrateCards, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := NewCardStore(db)
		if err := banking.SeedSandboxCards(ctx, s, "org", "app", "044525225", []string{"A1"}, nil); err != nil {
			t.Fatal(err)
		}
		at := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
		const rounds, writers = 10, 8
		for r := range rounds {
			id := fmt.Sprintf("3f0c6a4e-0000-4000-8000-%012d", r)
			var wg sync.WaitGroup
			var mu sync.Mutex
			stored := 0
			for i := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ext := id
					if i%2 == 1 {
						ext = strings.ToUpper(id)
					}
					l := banking.LimitChange{OrgID: "org", PartnerID: "app", BusinessCardID: "sbc-00005", Code: "NON_RENEW", ExternalID: ext,
						Limit: json.Number(fmt.Sprintf("%d.00", i+1)), BankStatus: banking.LimitExported, ChannelInfo: "API",
						CreatedAt: at, ExpiresAt: at.Add(time.Hour)}
					_, err := s.CreateLimit(ctx, l)
					switch {
					case err == nil:
						mu.Lock()
						stored++
						mu.Unlock()
					case banking.KindOf(err) != banking.KindWorkflow:
						t.Errorf("%s: concurrent duplicate answered %v (kind %v), want a workflow error", ext, err, banking.KindOf(err))
					}
				}()
			}
			wg.Wait()
			if stored != 1 {
				t.Errorf("%s: %d of %d concurrent applications stored, want 1", id, stored, writers)
			}
		}
		got, err := s.CardLimits(ctx, "org", "sbc-00005")
		if err != nil || len(got) != rounds {
			t.Fatalf("card limits: %d stored (%v), want one per externalId, %d", len(got), err, rounds)
		}
	})
}

// TestConcurrentLimitNumbers sends applications without a number, each its
// own externalId, from many goroutines at once: every one is stored with a
// number of its own, and together they are 1 to n, with no number given
// twice and none skipped (reference §11 answers the number; the bank gives
// it, as a payment order's).
func TestConcurrentLimitNumbers(t *testing.T) {
	storetest.Each(t, MigrateCards, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := NewCardStore(db)
		if err := banking.SeedSandboxCards(ctx, s, "org", "app", "044525225", []string{"A1"}, nil); err != nil {
			t.Fatal(err)
		}
		at := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
		const writers = 16
		var wg sync.WaitGroup
		var mu sync.Mutex
		seen := map[string]string{}
		for i := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				l := banking.LimitChange{OrgID: "org", PartnerID: "app", BusinessCardID: "sbc-00005", Code: "NON_RENEW",
					ExternalID: fmt.Sprintf("4a1d7b2e-0000-4000-8000-%012d", i), Limit: "1.00", BankStatus: banking.LimitCreated,
					ChannelInfo: "API", CreatedAt: at}
				n, err := s.CreateLimit(ctx, l)
				if err != nil {
					t.Errorf("%s: %v", l.ExternalID, err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				if other, ok := seen[n]; ok {
					t.Errorf("number %s given to %s and %s", n, other, l.ExternalID)
				}
				seen[n] = l.ExternalID
			}()
		}
		wg.Wait()
		for i := 1; i <= writers; i++ {
			if _, ok := seen[fmt.Sprint(i)]; !ok {
				t.Errorf("number %d not given; numbers %v", i, seen)
			}
		}
	})
}
