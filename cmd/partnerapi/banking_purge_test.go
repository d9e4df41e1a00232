package main

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"partnerapi/internal/background"
	"partnerapi/internal/banking"
	"partnerapi/internal/banking/bankingsql"
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
			p := identityPurger(banking.NewIdentity(store), health, 20*time.Millisecond)
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
