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

// TestLoginFailureStore: counts are per login and client, only after
// since; a new failure deletes the expired ones of every key; forgetting
// drops one key's.
func TestLoginFailureStore(t *testing.T) {
	storetest.Each(t, MigrateIdentity, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := NewIdentityStore(db)
		t0 := time.Unix(1_800_000_000, 0)
		for i, f := range []struct {
			login, client string
			at            time.Time
		}{
			{"alice", "10.0.0.1", t0},
			{"alice", "10.0.0.1", t0.Add(time.Minute)},
			{"alice", "10.0.0.2", t0.Add(time.Minute)},
			{"bob", "10.0.0.1", t0.Add(2 * time.Minute)},
		} {
			if err := s.AddLoginFailure(ctx, f.login, f.client, f.at, t0.Add(-time.Hour)); err != nil {
				t.Fatalf("add %d: %v", i, err)
			}
		}
		count := func(login, client string, since time.Time) int {
			t.Helper()
			n, err := s.LoginFailures(ctx, login, client, since)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		for _, c := range []struct {
			login, client string
			since         time.Time
			want          int
		}{
			{"alice", "10.0.0.1", t0.Add(-time.Second), 2},
			{"alice", "10.0.0.1", t0, 1}, // strictly after since
			{"alice", "10.0.0.2", t0.Add(-time.Second), 1},
			{"bob", "10.0.0.1", t0.Add(-time.Second), 1},
			{"bob", "10.0.0.2", t0.Add(-time.Second), 0},
			{"Alice", "10.0.0.1", t0.Add(-time.Second), 0},
		} {
			if got := count(c.login, c.client, c.since); got != c.want {
				t.Errorf("%s from %s since %v: %d, want %d", c.login, c.client, c.since.Sub(t0), got, c.want)
			}
		}
		if err := s.ForgetLoginFailures(ctx, "alice", "10.0.0.1"); err != nil {
			t.Fatal(err)
		}
		if got := count("alice", "10.0.0.1", t0.Add(-time.Hour)); got != 0 {
			t.Errorf("after forgetting: %d", got)
		}
		if got := count("alice", "10.0.0.2", t0.Add(-time.Hour)); got != 1 {
			t.Errorf("forgetting one client dropped another's: %d", got)
		}
		// A failure an hour later expires everything at or before t0+2m.
		if err := s.AddLoginFailure(ctx, "carol", "10.0.0.9", t0.Add(time.Hour), t0.Add(2*time.Minute)); err != nil {
			t.Fatal(err)
		}
		var rows int
		if err := db.R.QueryRowContext(ctx, `SELECT COUNT(*) FROM banking_login_failures`).Scan(&rows); err != nil {
			t.Fatal(err)
		}
		if rows != 1 {
			t.Errorf("rows after expiry: %d, want only carol's", rows)
		}
	})
}

// TestLoginThrottleIsSharedByProcesses: two Identity services over one
// database stand for two processes behind a load balancer (and a third
// for one restarted). A guesser spreading five wrong passwords over the
// two is refused by both and by the restarted one, even with the right
// password, until the window has passed. With the counters in each
// process, it had five guesses per process and per restart.
func TestLoginThrottleIsSharedByProcesses(t *testing.T) {
	storetest.Each(t, MigrateIdentity, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s, _ := sandboxIdentity(t, db)
		hash, err := banking.HashPassword("right")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.CreateUser(ctx, banking.User{ID: "u-throttle", OrgID: banking.SandboxOrgID, Login: "throttled", Name: "T", PasswordHash: hash}); err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		process := func() *banking.Identity {
			id := banking.NewIdentity(s)
			id.LoginFailures = s
			id.Now = func() time.Time { return now }
			return id
		}
		a, b := process(), process()
		for i := range 5 {
			p := []*banking.Identity{a, b}[i%2]
			if _, err := p.Login(ctx, "throttled", "wrong", "192.0.2.1"); !isAccessDenied(err) {
				t.Fatalf("guess %d: %v", i, err)
			}
		}
		for name, p := range map[string]*banking.Identity{"a": a, "b": b, "restarted": process()} {
			if _, err := p.Login(ctx, "throttled", "right", "192.0.2.1"); !isAccessDenied(err) {
				t.Errorf("process %s let the sixth attempt in: %v", name, err)
			}
		}
		// Another address is not held back by the guesser's count.
		if _, err := b.Login(ctx, "throttled", "right", "198.51.100.7"); err != nil {
			t.Errorf("the user from another address: %v", err)
		}
		now = now.Add(16 * time.Minute)
		if _, err := a.Login(ctx, "throttled", "right", "192.0.2.1"); err != nil {
			t.Errorf("after the window: %v", err)
		}
		if n, _ := s.LoginFailures(ctx, "throttled", "192.0.2.1", time.Time{}); n != 0 {
			t.Errorf("a successful sign-in left %d failures", n)
		}
	})
}

func isAccessDenied(err error) bool {
	var oe *banking.OAuthError
	return errors.As(err, &oe) && oe.Code == "access_denied"
}
