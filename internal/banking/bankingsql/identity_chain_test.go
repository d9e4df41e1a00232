package bankingsql

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"partnerapi/internal/banking"
)

// identityRefreshChain is the refresh-token reserve of reference §3 on the
// store: however a chain's tokens are used, only its newest refresh token
// and one reserve (for 2 h) stay usable. Before chains, each retry with the
// reserve left one more refresh token alive for 180 days.
func identityRefreshChain(t *testing.T, s *IdentityStore) {
	ctx := context.Background()
	now := time.Unix(1_800_000_000, 0)
	reserve := 2 * time.Hour
	tok := func(hash string) banking.Token {
		return banking.Token{Hash: hash, Kind: banking.TokenRefresh, ClientID: "c", OrgID: "o", UserID: "u",
			ExpiresAt: now.Add(180 * 24 * time.Hour)}
	}
	first := tok("chain-0")
	first.Chain = "grant-1"
	if err := s.SaveTokens(ctx, first); err != nil {
		t.Fatal(err)
	}
	rotate := func(old, next string, at time.Time) error {
		_, err := s.RotateRefresh(ctx, old, at, at.Add(reserve), tok(next))
		return err
	}
	live := func(at time.Time) []string {
		t.Helper()
		var out []string
		for _, h := range []string{"chain-0", "chain-1", "chain-2", "chain-3", "chain-4", "chain-5", "chain-6"} {
			got, err := s.GetToken(ctx, h)
			if errors.Is(err, banking.ErrNotFound) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Chain != "grant-1" {
				t.Fatalf("%s in chain %q", h, got.Chain)
			}
			if got.RevokedAt.IsZero() && at.Before(got.ExpiresAt) && (got.ReserveUntil.IsZero() || at.Before(got.ReserveUntil)) {
				out = append(out, h)
			}
		}
		return out
	}
	expect := func(at time.Time, want ...string) {
		t.Helper()
		if got := live(at); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("live refresh tokens %v, want %v", got, want)
		}
	}

	// The reserve reused three times within its 2 h: each retry replaces
	// the newest token instead of adding one.
	for i, next := range []string{"chain-1", "chain-2", "chain-3"} {
		if err := rotate("chain-0", next, now.Add(time.Duration(i)*30*time.Minute)); err != nil {
			t.Fatalf("retry %d: %v", i, err)
		}
		expect(now.Add(time.Duration(i)*30*time.Minute), "chain-0", next)
	}
	for _, h := range []string{"chain-1", "chain-2"} {
		if err := rotate(h, "x-"+h, now.Add(time.Hour)); !errors.Is(err, banking.ErrNotFound) {
			t.Fatalf("replaced %s refreshed: %v", h, err)
		}
	}
	// After the reserve only the newest works.
	at := now.Add(reserve)
	expect(at, "chain-3")
	if err := rotate("chain-0", "chain-4", at); !errors.Is(err, banking.ErrNotFound) {
		t.Fatalf("reserve after 2 h: %v", err)
	}
	// Using the newest makes it the reserve and ends the one before, even
	// inside that one's 2 h.
	if err := rotate("chain-3", "chain-4", at); err != nil {
		t.Fatal(err)
	}
	if err := rotate("chain-4", "chain-5", at.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	expect(at.Add(time.Minute), "chain-4", "chain-5")
	if err := rotate("chain-3", "chain-6", at.Add(2*time.Minute)); !errors.Is(err, banking.ErrNotFound) {
		t.Fatalf("previous reserve refreshed: %v", err)
	}
	// The newest token still works 179 days on, the reserve's tokens do not.
	late := at.Add(179 * 24 * time.Hour)
	expect(late, "chain-5")

	// Rotations racing on one chain, with the reserve and with the newest
	// token at once, leave one newest token and one reserve.
	base := now.Add(10 * 24 * time.Hour)
	r0 := tok("race-0")
	r0.Chain = "grant-2"
	if err := s.SaveTokens(ctx, r0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RotateRefresh(ctx, "race-0", base, base.Add(reserve), tok("race-1")); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var won []string
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			old := "race-0"
			if i%2 == 1 {
				old = "race-1"
			}
			next := fmt.Sprintf("race-n%d", i)
			_, err := s.RotateRefresh(ctx, old, base.Add(time.Minute), base.Add(time.Minute+reserve), tok(next))
			if err == nil {
				mu.Lock()
				won = append(won, next)
				mu.Unlock()
			} else if !errors.Is(err, banking.ErrNotFound) {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	var liveRace []string
	for _, h := range append([]string{"race-0", "race-1"}, won...) {
		got, err := s.GetToken(ctx, h)
		if err != nil {
			t.Fatal(err)
		}
		at := base.Add(time.Minute)
		if got.RevokedAt.IsZero() && (got.ReserveUntil.IsZero() || at.Before(got.ReserveUntil)) {
			liveRace = append(liveRace, h)
		}
	}
	if len(won) == 0 || len(liveRace) != 2 {
		t.Fatalf("after racing rotations %v succeeded and %v are live, want one newest and one reserve", won, liveRace)
	}
}
