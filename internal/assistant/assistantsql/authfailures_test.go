package assistantsql_test

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"partnerapi/internal/assistant/assistantsql"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// TestAuthFailureConformance holds both engines to what the token
// endpoints' throttle reads from them: a key's failures after since,
// newest first and at most limit; keys (client id, address) apart; an
// address's failures across ids; a failure's write dropping every
// expired row; a forget dropping its own key's alone.
func TestAuthFailureConformance(t *testing.T) {
	storetest.Each(t, assistantsql.Migrate, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := assistantsql.New(db)
		t0 := time.Unix(1_800_000_000, 123_456_789)
		at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Minute) }
		never := time.Unix(0, 0)
		add := func(client, addr string, i int) {
			t.Helper()
			if _, err := s.AddAuthFailure(ctx, client, addr, at(i), never, 0); err != nil {
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
		// An address's failures across client ids.
		addrTests := []struct {
			name, addr string
			since      time.Time
			limit      int
			want       []time.Time
		}{
			{"every id, newest first", "192.0.2.1", never, 10, []time.Time{at(3), at(2), at(1), at(0), at(0)}},
			{"at most limit", "192.0.2.1", never, 3, []time.Time{at(3), at(2), at(1)}},
			{"only after since", "192.0.2.1", at(0), 10, []time.Time{at(3), at(2), at(1)}},
			{"another address", "192.0.2.2", never, 10, []time.Time{at(0)}},
			{"no failures", "192.0.2.3", never, 10, nil},
		}
		for _, tt := range addrTests {
			got, err := s.AddrAuthFailures(ctx, tt.addr, tt.since, tt.limit)
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
		if _, err := s.AddAuthFailure(ctx, "c", "192.0.2.9", at(5), at(0), 0); err != nil {
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

// TestAuthFailureAddrCap holds both engines to the cap of one address's
// failures across client ids: a write finds the address's failures left
// after expired and records its own only under the cap, so an address
// spraying made-up ids holds at most the cap's rows; expired rows make
// room again, another address has its own room, and a cap of 0 records
// every failure.
func TestAuthFailureAddrCap(t *testing.T) {
	storetest.Each(t, assistantsql.Migrate, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := assistantsql.New(db)
		t0 := time.Unix(1_800_000_000, 0)
		at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Second) }
		never := time.Unix(0, 0)
		rows := func(addr string) int {
			t.Helper()
			var n int
			if err := db.R.QueryRowContext(ctx, `SELECT COUNT(*) FROM assistant_auth_failures WHERE addr = $1`, addr).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		steps := []struct {
			name      string
			client    string
			addr      string
			at        int
			expired   time.Time
			addrLimit int
			wantFound int // the count AddAuthFailure returns
			wantRows  int // the address's rows after it
		}{
			{"first", "id-1", "192.0.2.1", 1, never, 3, 0, 1},
			{"second, another id", "id-2", "192.0.2.1", 2, never, 3, 1, 2},
			{"third, another id", "id-3", "192.0.2.1", 3, never, 3, 2, 3},
			{"fourth: at the cap, not recorded", "id-4", "192.0.2.1", 4, never, 3, 3, 3},
			{"fifth, a known id: not recorded", "id-1", "192.0.2.1", 5, never, 3, 3, 3},
			{"another address has its own room", "id-5", "192.0.2.2", 5, never, 3, 0, 1},
			{"the first expired: room for one", "id-6", "192.0.2.1", 6, at(1), 3, 2, 3},
			{"full again", "id-7", "192.0.2.1", 7, at(1), 3, 3, 3},
			{"no cap: recorded, count not taken", "id-8", "192.0.2.1", 8, at(1), 0, 0, 4},
		}
		for _, st := range steps {
			found, err := s.AddAuthFailure(ctx, st.client, st.addr, at(st.at), st.expired, st.addrLimit)
			if err != nil {
				t.Fatalf("%s: %v", st.name, err)
			}
			if found != st.wantFound || rows(st.addr) != st.wantRows {
				t.Fatalf("%s: found %d with %d rows after, want %d and %d", st.name, found, rows(st.addr), st.wantFound, st.wantRows)
			}
		}
	})
}

// TestAuthFailureAddrCapConcurrent writes many failures of made-up ids
// from one address at once, each on its own connection where the engine
// has several (PostgreSQL): the count and the insert of one address run
// one at a time, so exactly the cap's rows are written and exactly that
// many writes found room.
func TestAuthFailureAddrCapConcurrent(t *testing.T) {
	storetest.Each(t, assistantsql.Migrate, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := assistantsql.New(db)
		const addrLimit, writers = 5, 40
		t0 := time.Unix(1_800_000_000, 0)
		found := make(chan int, writers)
		errs := make(chan error, writers)
		for i := range writers {
			go func() {
				n, err := s.AddAuthFailure(ctx, "id-"+strconv.Itoa(i), "192.0.2.1", t0.Add(time.Duration(i)), time.Unix(0, 0), addrLimit)
				found <- n
				errs <- err
			}()
		}
		recorded := 0
		for range writers {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
			if <-found < addrLimit {
				recorded++
			}
		}
		got, err := s.AddrAuthFailures(ctx, "192.0.2.1", time.Unix(0, 0), writers)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != addrLimit || recorded != addrLimit {
			t.Fatalf("%d rows and %d writes that found room after %d concurrent writes under a cap of %d, want %d of each",
				len(got), recorded, writers, addrLimit, addrLimit)
		}
	})
}
