package assistantsql_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"partnerapi/internal/assistant/assistantsql"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// TestAuthFailureConformance holds both engines to what the token
// endpoints' throttle reads from them: a key's failures after since,
// newest first and at most limit; keys (client id, address) apart; a
// failure's write dropping every expired row; a forget dropping its own
// key's alone.
func TestAuthFailureConformance(t *testing.T) {
	storetest.Each(t, assistantsql.Migrate, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := assistantsql.New(db)
		t0 := time.Unix(1_800_000_000, 123_456_789)
		at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Minute) }
		never := time.Unix(0, 0)
		add := func(client, addr string, i int) {
			t.Helper()
			if err := s.AddAuthFailure(ctx, client, addr, at(i), never); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 4 {
			add("a", "192.0.2.1", i)
		}
		add("a", "192.0.2.2", 0)
		add("b", "192.0.2.1", 0)

		tests := []struct {
			name, client, addr string
			since              time.Time
			limit              int
			want               []time.Time
		}{
			{"all, newest first", "a", "192.0.2.1", never, 10, []time.Time{at(3), at(2), at(1), at(0)}},
			{"at most limit", "a", "192.0.2.1", never, 2, []time.Time{at(3), at(2)}},
			{"only after since", "a", "192.0.2.1", at(1), 10, []time.Time{at(3), at(2)}},
			{"another address", "a", "192.0.2.2", never, 10, []time.Time{at(0)}},
			{"another client", "b", "192.0.2.1", never, 10, []time.Time{at(0)}},
			{"no failures", "c", "192.0.2.1", never, 10, nil},
		}
		for _, tt := range tests {
			got, err := s.AuthFailures(ctx, tt.client, tt.addr, tt.since, tt.limit)
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			if !slices.EqualFunc(got, tt.want, time.Time.Equal) {
				t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
			}
		}

		// Forgetting one key leaves the others' failures.
		if err := s.ForgetAuthFailures(ctx, "a", "192.0.2.1"); err != nil {
			t.Fatal(err)
		}
		count := func(client, addr string) int {
			t.Helper()
			got, err := s.AuthFailures(ctx, client, addr, never, 100)
			if err != nil {
				t.Fatal(err)
			}
			return len(got)
		}
		if n, m, k := count("a", "192.0.2.1"), count("a", "192.0.2.2"), count("b", "192.0.2.1"); n != 0 || m != 1 || k != 1 {
			t.Fatalf("after forgetting a at 192.0.2.1: %d, %d, %d failures left, want 0, 1, 1", n, m, k)
		}

		// A new failure's write drops every row at or before expired,
		// whatever its key, so the table holds one window.
		if err := s.AddAuthFailure(ctx, "c", "192.0.2.9", at(5), at(0)); err != nil {
			t.Fatal(err)
		}
		var rows int
		if err := db.R.QueryRowContext(ctx, `SELECT COUNT(*) FROM assistant_auth_failures`).Scan(&rows); err != nil {
			t.Fatal(err)
		}
		if rows != 1 {
			t.Fatalf("%d rows after a write that expires every earlier one, want 1", rows)
		}
	})
}
