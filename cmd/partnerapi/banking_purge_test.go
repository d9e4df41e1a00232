package main

import (
	"context"
	"database/sql"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"partnerapi/internal/background"
	"partnerapi/internal/banking"
	"partnerapi/internal/banking/bankingsql"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/sqlite"
	"partnerapi/internal/storetest"
	"partnerapi/internal/testenv"
)

// purgeOutageStore is the real identity store on SQLite whose PurgeExpired
// fails with a database outage's error while down is set, and counts the
// purges that reached the database.
type purgeOutageStore struct {
	*bankingsql.IdentityStore
	err    error
	mu     sync.Mutex
	down   bool
	failed int
	purged int
}

func (s *purgeOutageStore) PurgeExpired(ctx context.Context, before time.Time) (int64, error) {
	s.mu.Lock()
	if s.down {
		s.failed++
		s.mu.Unlock()
		return 0, s.err
	}
	s.mu.Unlock()
	n, err := s.IdentityStore.PurgeExpired(ctx, before)
	s.mu.Lock()
	s.purged++
	s.mu.Unlock()
	return n, err
}

func (s *purgeOutageStore) state() (failed, purged int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed, s.purged
}

// The identity purger across a database outage: it keeps running while the
// database is away, says so in one WARN line and says it works again in
// one INFO line (not one line per run), purges again once the database is
// back, and counts its failed runs on /metrics. The outage spans several of
// its runs: every run fails while it lasts.
func TestIdentityPurgerAcrossOutage(t *testing.T) {
	for _, tc := range []struct {
		name    string
		outages int // outages, each of several runs
	}{
		{"one outage", 1},
		{"two outages", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := storetest.SQLite(t)
			if err := bankingsql.MigrateIdentity(context.Background(), db); err != nil {
				t.Fatal(err)
			}
			store := &purgeOutageStore{IdentityStore: bankingsql.NewIdentityStore(db), err: storetest.UnavailableError(t)}
			logs := &testenv.LogBuffer{}
			reg := prometheus.NewRegistry()
			metrics := background.NewMetrics(reg)
			health := metrics.Worker("banking-identity-purge", slog.New(slog.NewTextHandler(logs, nil)))
			p := identityPurger(banking.NewIdentity(store), health, 20*time.Millisecond, time.Minute)
			served := make(chan error, 1)
			go func() { served <- p.serve() }()
			for range tc.outages {
				_, purged := store.state()
				eventually(t, 5*time.Second, "a purge before the outage", func() bool { _, n := store.state(); return n > purged })
				store.mu.Lock()
				store.down = true
				store.mu.Unlock()
				failed, _ := store.state()
				eventually(t, 5*time.Second, "five failed runs", func() bool { n, _ := store.state(); return n >= failed+5 })
				store.mu.Lock()
				store.down = false
				store.mu.Unlock()
				_, purged = store.state()
				eventually(t, 5*time.Second, "purges after the outage", func() bool { _, n := store.state(); return n >= purged+3 })
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := p.stop(ctx); err != nil {
				t.Fatal(err)
			}
			if err := <-served; err != nil {
				t.Fatal(err)
			}
			out := logs.String()
			if n := strings.Count(out, "level=WARN msg=\"banking-identity-purge: database unavailable"); n != tc.outages {
				t.Errorf("%d WARN lines, want %d:\n%s", n, tc.outages, out)
			}
			if n := strings.Count(out, "level=INFO msg=\"banking-identity-purge: works again"); n != tc.outages {
				t.Errorf("%d INFO lines, want %d:\n%s", n, tc.outages, out)
			}
			if n := strings.Count(out, "\n"); n != 2*tc.outages {
				t.Errorf("%d lines in all, want %d:\n%s", n, 2*tc.outages, out)
			}
			if health.Failing() {
				t.Error("the purger still failing after the outage")
			}
			failed, _ := store.state()
			if v := counterValue(t, reg, "partnerapi_background_errors_total", "banking-identity-purge", background.ReasonUnavailable); v != float64(failed) {
				t.Errorf("failed runs counted %v, want %d", v, failed)
			}
		})
	}
}

// counterValue is the value of the counter name{worker, reason} in reg; -1
// when it has no such series.
func counterValue(t *testing.T, reg *prometheus.Registry, name, worker, reason string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["worker"] == worker && labels["reason"] == reason {
				return m.GetCounter().GetValue()
			}
		}
	}
	return -1
}

// The identity purger on a database another session holds locked (on
// PostgreSQL an ACCESS EXCLUSIVE lock of the tokens, which a DELETE waits
// for without end; on SQLite the file's write lock, which a writer waits
// for until busy_timeout, 10 s): each run ends at its bound and is
// reported, one WARN line and database_unavailable counts, and once the
// lock is gone the purger works again and says so. Before runs had a
// bound, the first run held the purger for as long as the lock lasted.
func TestIdentityPurgerOfALockedDatabase(t *testing.T) {
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			var db *sqldb.DB
			if engine == "sqlite" {
				var err error
				if db, err = sqlite.Open(ctx, dir); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { db.Close() })
			} else {
				db = storetest.Postgres(t)
			}
			if err := bankingsql.MigrateIdentity(ctx, db); err != nil {
				t.Fatal(err)
			}
			var lock *sql.Tx
			if engine == "sqlite" {
				other, err := sql.Open("sqlite", "file:"+filepath.Join(dir, sqlite.FileName)+"?_txlock=immediate")
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { other.Close() })
				if lock, err = other.BeginTx(ctx, nil); err != nil {
					t.Fatal(err)
				}
			} else {
				var err error
				if lock, err = db.W.BeginTx(ctx, nil); err != nil {
					t.Fatal(err)
				}
				if _, err := lock.ExecContext(ctx, `LOCK TABLE banking_tokens IN ACCESS EXCLUSIVE MODE`); err != nil {
					t.Fatal(err)
				}
			}
			release := sync.OnceFunc(func() { _ = lock.Rollback() })
			t.Cleanup(release)
			if engine == "sqlite" {
				// Any write takes the file's write lock.
				if _, err := lock.ExecContext(ctx, `DELETE FROM banking_auth_codes`); err != nil {
					t.Fatal(err)
				}
			}
			logs := &testenv.LogBuffer{}
			reg := prometheus.NewRegistry()
			health := background.NewMetrics(reg).Worker("banking-identity-purge", slog.New(slog.NewTextHandler(logs, nil)))
			p := identityPurger(banking.NewIdentity(bankingsql.NewIdentityStore(db)), health, 20*time.Millisecond, 100*time.Millisecond)
			served := make(chan error, 1)
			go func() { served <- p.serve() }()
			defer func() {
				release()
				sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				defer cancel()
				if err := p.stop(sctx); err != nil {
					t.Error(err)
				}
				if err := <-served; err != nil {
					t.Error(err)
				}
			}()
			failed := func() bool {
				return counterValue(t, reg, "partnerapi_background_errors_total", "banking-identity-purge", background.ReasonUnavailable) >= 3
			}
			eventually(t, 3*time.Second, "three runs failed at their bound", failed)
			release()
			eventually(t, 5*time.Second, "the purger working again", func() bool { return !health.Failing() })
			out := logs.String()
			if strings.Count(out, `level=WARN msg="banking-identity-purge: database unavailable`) != 1 ||
				strings.Count(out, `level=INFO msg="banking-identity-purge: works again"`) != 1 || strings.Contains(out, "level=ERROR") {
				t.Fatalf("the purger's log, want one WARN and one INFO:\n%s", out)
			}
		})
	}
}
