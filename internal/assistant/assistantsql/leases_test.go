package assistantsql_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"partnerapi/internal/assistant"
	"partnerapi/internal/assistant/assistantsql"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// TestLeaseConformance holds both engines to the lease contract that the
// cross-process concurrency limit rests on: a client gets no more live
// leases than its limit, its expired leases neither count nor come back
// through a renewal, a renewal keeps a live lease counting past its first
// expiry, a release frees the slot at once, and clients do not share slots.
func TestLeaseConformance(t *testing.T) {
	storetest.Each(t, assistantsql.Migrate, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := assistantsql.New(db)
		t0 := time.UnixMilli(1_000_000_000)
		lease := func(id, client string, exp time.Time) assistant.Lease {
			return assistant.Lease{ID: id, ClientID: client, ExpiresAt: exp}
		}
		acquire := func(id, client string, limit int, now time.Time) error {
			return s.AcquireLease(ctx, lease(id, client, now.Add(30*time.Second)), limit, now)
		}
		for i := range 3 {
			if err := acquire(fmt.Sprintf("a%d", i), "a", 3, t0); err != nil {
				t.Fatalf("lease %d of 3: %v", i+1, err)
			}
		}
		if err := acquire("a3", "a", 3, t0); !errors.Is(err, assistant.ErrTooManyRequests) {
			t.Fatalf("a fourth lease under a limit of 3: %v, want ErrTooManyRequests", err)
		}
		// A limit is the caller's to say: the same client under a
		// higher one has room.
		if err := acquire("a3", "a", 4, t0); err != nil {
			t.Fatalf("a fourth lease under a limit of 4: %v", err)
		}
		if err := acquire("b0", "b", 1, t0); err != nil {
			t.Fatalf("another client's first lease: %v", err)
		}
		if err := acquire("b1", "b", 1, t0); !errors.Is(err, assistant.ErrTooManyRequests) {
			t.Fatalf("another client's second lease under a limit of 1: %v", err)
		}

		if err := s.ReleaseLease(ctx, "a0"); err != nil {
			t.Fatal(err)
		}
		if err := s.ReleaseLease(ctx, "a0"); err != nil {
			t.Fatalf("releasing a released lease: %v", err)
		}
		if err := acquire("a4", "a", 4, t0); err != nil {
			t.Fatalf("a lease after a release: %v", err)
		}

		// 20 s on, a1 and a2 are renewed for another 30 s; a3 and a4 are
		// not. 40 s on, only the renewed two count, so two more fit
		// under 4; a renewal then does not bring the lapsed ones back.
		n, err := s.RenewLeases(ctx, []string{"a2", "a1", "gone"}, t0.Add(20*time.Second), t0.Add(50*time.Second))
		if err != nil || n != 2 {
			t.Fatalf("RenewLeases of two live leases and an unknown one = %d, %v; want 2", n, err)
		}
		t40 := t0.Add(40 * time.Second)
		for _, id := range []string{"a5", "a6"} {
			if err := acquire(id, "a", 4, t40); err != nil {
				t.Fatalf("lease %s beside two renewed ones after two lapsed: %v", id, err)
			}
		}
		if err := acquire("a7", "a", 4, t40); !errors.Is(err, assistant.ErrTooManyRequests) {
			t.Fatalf("a fifth live lease under 4: %v", err)
		}
		n, err = s.RenewLeases(ctx, []string{"a3", "a4"}, t40, t40.Add(30*time.Second))
		if err != nil || n != 0 {
			t.Fatalf("RenewLeases of lapsed leases = %d, %v; want 0", n, err)
		}
		// At 51 s the renewed ones have lapsed as well (renewed to 50 s):
		// a5 and a6 alone count.
		if err := acquire("a8", "a", 3, t0.Add(51*time.Second)); err != nil {
			t.Fatalf("a third lease after the renewed ones lapsed: %v", err)
		}
		var rows int
		if err := db.R.QueryRowContext(ctx, `SELECT COUNT(*) FROM assistant_leases WHERE client_id = 'a'`).Scan(&rows); err != nil || rows != 3 {
			t.Fatalf("client a has %d lease rows (%v) after its acquisitions dropped the lapsed ones, want 3", rows, err)
		}
		if n, err := s.RenewLeases(ctx, nil, t40, t40); err != nil || n != 0 {
			t.Fatalf("RenewLeases of nothing = %d, %v", n, err)
		}
	})
}

// A renewal of more leases than one statement carries renews them all.
func TestRenewManyLeases(t *testing.T) {
	storetest.Each(t, assistantsql.Migrate, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := assistantsql.New(db)
		now := time.UnixMilli(1_000_000_000)
		var ids []string
		for i := range 1001 {
			id := fmt.Sprintf("l%04d", i)
			if err := s.AcquireLease(ctx, assistant.Lease{ID: id, ClientID: "c", ExpiresAt: now.Add(time.Second)}, 2000, now); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		n, err := s.RenewLeases(ctx, ids, now, now.Add(time.Minute))
		if err != nil || n != len(ids) {
			t.Fatalf("RenewLeases of %d = %d, %v", len(ids), n, err)
		}
	})
}
