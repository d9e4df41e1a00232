package bankingsql

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"partnerapi/internal/background"
	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/sqlite"
	"partnerapi/internal/storetest"
	"partnerapi/internal/testenv"
)

// stallStore is the real payment store with a stalled database switched on
// per method: a call of a stalled method waits, as a query on a database
// that took the connection and never answers does, until the stall ends or
// the call's context does; then it runs on the real store, which answers a
// context that ended as its driver does.
type stallStore struct {
	*PaymentStore
	mu      sync.Mutex
	stalled map[string]bool
	resumed chan struct{}
}

func (s *stallStore) stall(methods ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stalled = map[string]bool{}
	for _, m := range methods {
		s.stalled[m] = true
	}
	s.resumed = make(chan struct{})
}

// resume ends the stall: the calls waiting go on to the database.
func (s *stallStore) resume() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stalled != nil {
		s.stalled = nil
		close(s.resumed)
	}
}

// wait holds a call of a stalled method and returns the context the call
// goes on with. A method not stalled answers as a healthy database does,
// whatever the bound: its call goes on without the deadline. The tests'
// bound is 200 ms, which a real call on a loaded machine exceeded (the
// claim of "the partner's setting and the release" on PostgreSQL, under
// CPU load, 2026-12-01): the pass then failed at that call, before the
// stalled one, left the event unclaimed, and the next pass sent it.
func (s *stallStore) wait(ctx context.Context, method string) context.Context {
	s.mu.Lock()
	stalled, resumed := s.stalled[method], s.resumed
	s.mu.Unlock()
	if !stalled {
		return context.WithoutCancel(ctx)
	}
	select {
	case <-resumed:
	case <-ctx.Done():
	}
	return ctx
}

func (s *stallStore) DueWebhooks(ctx context.Context, now time.Time, limit int, configuredOnly bool) ([]banking.WebhookEvent, error) {
	return s.PaymentStore.DueWebhooks(s.wait(ctx, "DueWebhooks"), now, limit, configuredOnly)
}

func (s *stallStore) RecordWebhookAttempt(ctx context.Context, id int64, a banking.WebhookAttempt, delivered bool, next time.Time) error {
	return s.PaymentStore.RecordWebhookAttempt(s.wait(ctx, "RecordWebhookAttempt"), id, a, delivered, next)
}

func (s *stallStore) ReleaseWebhooks(ctx context.Context, evs []banking.WebhookEvent, next time.Time) error {
	return s.PaymentStore.ReleaseWebhooks(s.wait(ctx, "ReleaseWebhooks"), evs, next)
}

func (s *stallStore) GetPartnerWebhook(ctx context.Context, clientID string) (banking.PartnerWebhook, error) {
	return s.PaymentStore.GetPartnerWebhook(s.wait(ctx, "GetPartnerWebhook"), clientID)
}

// stallBound is the bound the tests give a pass or a store call: the pass
// must fail within it and some slack for a loaded machine.
const (
	stallBound = 200 * time.Millisecond
	stallSlack = 3 * time.Second
)

// runBounded runs one pass and fails the test when it has not ended within
// stallBound and the slack: before passes had a bound, a stalled store held
// the pass until the process ended.
func runBounded(t *testing.T, d *banking.WebhookDispatcher) error {
	t.Helper()
	type result struct {
		err  error
		took time.Duration
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		_, err := d.RunOnce(context.Background())
		done <- result{err, time.Since(start)}
	}()
	select {
	case r := <-done:
		return r.err
	case <-time.After(stallBound + stallSlack):
		t.Fatalf("the pass still runs %s after it began, with a bound of %s", time.Since(start).Round(time.Millisecond), stallBound)
		return nil
	}
}

// A pass whose store stops answering, at whichever of its calls, fails
// within its bound with an error the serve loop's health report counts as
// the database not answering (banking.ErrWebhookStoreStalled, a deadline),
// instead of holding every delivery behind it; when the store answers
// again the event is delivered, at the next pass or, when the partner's
// answer could not be recorded, after the claim's lease, once more with
// the same externalId and eventTime. The stall spends none of the event's
// attempts.
func TestWebhookPassOfAStalledStore(t *testing.T) {
	type run struct {
		stall   []string      // store methods that hang during the pass
		advance time.Duration // the clock moves this far before the pass
		wantErr bool
		sent    int
	}
	for _, tc := range []struct {
		name      string
		passBound bool // the pass's bound ends the stall, not the store call's
		runs      []run
		received  int
	}{
		{name: "the claim", received: 1, runs: []run{
			{stall: []string{"DueWebhooks"}, wantErr: true},
			{sent: 1},
		}},
		{name: "the claim, ended by the pass's bound", passBound: true, received: 1, runs: []run{
			{stall: []string{"DueWebhooks"}, wantErr: true},
			{sent: 1},
		}},
		{name: "the partner's setting", received: 1, runs: []run{
			{stall: []string{"GetPartnerWebhook"}, wantErr: true},
			{sent: 1},
		}},
		{name: "the partner's setting and the release", received: 1, runs: []run{
			{stall: []string{"GetPartnerWebhook", "ReleaseWebhooks"}, wantErr: true},
			{},
			{advance: time.Minute, sent: 1},
		}},
		{name: "the record of the answer", received: 2, runs: []run{
			{stall: []string{"RecordWebhookAttempt"}, wantErr: true, sent: 1},
			{},
			{advance: time.Minute, sent: 1},
			{advance: 2 * time.Minute},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
				ctx := context.Background()
				at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
				now := at.Add(time.Second)
				store := &stallStore{PaymentStore: NewPaymentStore(db)}
				t.Cleanup(store.resume) // before the database closes
				implementedPayment(t, store, "e3000000-0000-4000-8000-000000000001", at)
				send := &targetSender{hooks: &banking.Webhooks{Store: store, Default: banking.WebhookTarget{URL: "https://partner.example/hook"}, LookupTimeout: stallBound}}
				d := &banking.WebhookDispatcher{Outbox: store, Sender: send, Now: func() time.Time { return now }, Workers: 1,
					PassTimeout: time.Hour, StoreTimeout: stallBound}
				if tc.passBound {
					d.PassTimeout, d.StoreTimeout = stallBound, time.Hour
				}
				for i, r := range tc.runs {
					now = now.Add(r.advance)
					// A pass with nothing stalled shows that the store
					// works again, not how fast it answers: its bound is
					// one a loaded machine meets (a full race-enabled run
					// took a real call past 200 ms).
					bound := stallBound
					if len(r.stall) == 0 {
						bound = 30 * time.Second
					}
					send.hooks.LookupTimeout = bound
					if tc.passBound {
						d.PassTimeout = bound
					} else {
						d.StoreTimeout = bound
					}
					store.stall(r.stall...)
					before := len(send.received)
					err := runBounded(t, d)
					store.resume()
					if (err != nil) != r.wantErr || (err != nil && (!errors.Is(err, banking.ErrWebhookStoreStalled) || !errors.Is(err, context.DeadlineExceeded))) {
						t.Fatalf("pass %d: %v, want a stalled store's error %v", i, err, r.wantErr)
					}
					if got := len(send.received) - before; got != r.sent {
						t.Fatalf("pass %d sent %d, want %d", i, got, r.sent)
					}
				}
				if len(send.received) != tc.received {
					t.Fatalf("the partner received %d, want %d", len(send.received), tc.received)
				}
				log, err := store.WebhookLog(ctx, send.received[0].ID)
				if err != nil || len(log) != 1 || log[0].Attempt != 1 || log[0].HTTPStatus != 204 {
					t.Fatalf("delivery log %+v %v, want one delivered attempt", log, err)
				}
			})
		})
	}
}

// lockDatabase holds a lock on the outbox from a connection of its own, as
// another process (a migration, an operator's session, a vacuum) can, until
// the returned function releases it: on PostgreSQL an ACCESS EXCLUSIVE lock
// of the table, which every query on it waits for without end; on SQLite
// the write lock of the file, which writers wait for until busy_timeout
// (10 s). The lock is released when the test ends too, before the
// database closes, so that a pass still waiting for it ends.
func lockDatabase(t *testing.T, db *sqldb.DB, dir string) (release func()) {
	t.Helper()
	defer func() { t.Cleanup(release) }()
	ctx := context.Background()
	if db.Dialect == sqldb.Postgres {
		tx, err := db.W.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, `LOCK TABLE banking_payment_webhooks IN ACCESS EXCLUSIVE MODE`); err != nil {
			t.Fatal(err)
		}
		return sync.OnceFunc(func() { _ = tx.Rollback() })
	}
	other, err := sql.Open("sqlite", "file:"+filepath.Join(dir, sqlite.FileName)+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	tx, err := other.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE banking_payment_webhooks SET attempts = attempts`); err != nil {
		t.Fatal(err)
	}
	return sync.OnceFunc(func() { _ = tx.Rollback(); _ = other.Close() })
}

// A pass on a database that another session holds locked fails within its
// bound, and the background worker that runs the serve loop's passes says
// so once at WARN and counts it as database_unavailable; once the lock is
// gone the next pass delivers the event.
func TestWebhookPassOfALockedDatabase(t *testing.T) {
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			dir := t.TempDir()
			var db *sqldb.DB
			if engine == "sqlite" {
				var err error
				if db, err = sqlite.Open(context.Background(), dir); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { db.Close() })
			} else {
				db = storetest.Postgres(t)
			}
			ctx := context.Background()
			if err := MigratePayments(ctx, db); err != nil {
				t.Fatal(err)
			}
			store := NewPaymentStore(db)
			at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
			implementedPayment(t, store, "e3000000-0000-4000-8000-000000000002", at)
			send := &targetSender{hooks: &banking.Webhooks{Store: store, Default: banking.WebhookTarget{URL: "https://partner.example/hook"}}}
			d := &banking.WebhookDispatcher{Outbox: store, Sender: send, Now: func() time.Time { return at.Add(time.Second) },
				StoreTimeout: stallBound}
			logs := &testenv.LogBuffer{}
			reg := prometheus.NewRegistry()
			health := background.NewMetrics(reg).Worker("banking-webhooks", slog.New(slog.NewTextHandler(logs, nil)))

			release := lockDatabase(t, db, dir)
			err := runBounded(t, d)
			release()
			if !errors.Is(err, banking.ErrWebhookStoreStalled) {
				t.Fatalf("a pass on a locked database: %v, want a stalled store's error", err)
			}
			health.Report(err)
			// The pass after the lock has a bound a loaded machine meets
			// (a full race-enabled run took the PostgreSQL walk past
			// 200 ms): it shows the store works again, not how fast.
			d.StoreTimeout = 30 * time.Second
			if n, err := d.RunOnce(ctx); err != nil || n != 1 || len(send.received) != 1 {
				t.Fatalf("the pass after the lock: %d %v, received %d; want the event delivered", n, err, len(send.received))
			}
			health.Report(nil)
			out := logs.String()
			if !strings.Contains(out, `level=WARN msg="banking-webhooks: database unavailable`) || !strings.Contains(out, `level=INFO msg="banking-webhooks: works again"`) ||
				strings.Contains(out, "level=ERROR") {
				t.Fatalf("the worker's log, want one WARN and one INFO:\n%s", out)
			}
			families, _ := reg.Gather()
			found := false
			for _, f := range families {
				for _, m := range f.GetMetric() {
					if f.GetName() == "partnerapi_background_errors_total" && strings.Contains(m.String(), background.ReasonUnavailable) && m.GetCounter().GetValue() == 1 {
						found = true
					}
				}
			}
			if !found {
				t.Fatal("partnerapi_background_errors_total{reason=database_unavailable} is not 1")
			}
		})
	}
}
