package bankingsql

import (
	"context"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// The retention purge (--banking-webhook-retention) deletes the events
// finished, delivered or failed for good, longer ago than the retention,
// with their delivery log rows, and nothing else: an event still pending
// (a retry due), one parked for want of a URL, one finished more recently
// (its age counts from its end, not its queueing) and the outbox's newest
// row stay, logs and all. With the newest row kept a new event gets an
// id above every one handed out before, on SQLite's plain rowid too.
// Before, nothing was ever deleted.
func TestWebhookPurgeFinished(t *testing.T) {
	day := 24 * time.Hour
	for _, tc := range []struct {
		name     string
		failedAt time.Duration // when the failed event finished, after it was queued
		purgeAt  time.Duration
		deleted  []string // of the events below
	}{
		{name: "within the retention", failedAt: time.Second, purgeAt: 29 * day},
		{name: "past the retention", failedAt: time.Second, purgeAt: 31 * day, deleted: []string{"delivered", "failed"}},
		{name: "finished late", failedAt: 20 * day, purgeAt: 31 * day, deleted: []string{"delivered"}},
		{name: "long past the retention", failedAt: 20 * day, purgeAt: 60 * day, deleted: []string{"delivered", "failed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
				ctx := context.Background()
				at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
				s := NewPaymentStore(db).WithClock(func() time.Time { return at })
				queueEvents(t, s, "pb", 1, at) // no webhook: parked
				queueEvents(t, s, "pa", 4, at)
				ownWebhooks(t, s, at, "pa")
				evs, err := s.DueWebhooks(ctx, at, 10, true)
				if err != nil || len(evs) != 4 {
					t.Fatalf("claimed %d %v, want pa's 4", len(evs), err)
				}
				ids := map[string]int64{"parked": maxWebhookID(t, db) - 4}
				for i, name := range []string{"delivered", "failed", "pending", "newest"} {
					ids[name] = evs[i].ID
				}
				record := func(name string, after time.Duration, delivered bool, next time.Time) {
					t.Helper()
					a := banking.WebhookAttempt{Attempt: 1, At: at.Add(after), HTTPStatus: 500}
					if delivered {
						a.HTTPStatus = 204
					}
					if err := s.RecordWebhookAttempt(ctx, ids[name], a, delivered, next); err != nil {
						t.Fatal(err)
					}
				}
				record("delivered", time.Second, true, time.Time{})
				record("failed", tc.failedAt, false, time.Time{})
				record("pending", time.Second, false, at.Add(100*day))
				record("newest", time.Second, true, time.Time{})
				top := maxWebhookID(t, db)

				r := &banking.WebhookRetention{Outbox: s, Keep: 30 * day, Now: func() time.Time { return at.Add(tc.purgeAt) }}
				n, more, err := r.Purge(ctx)
				if err != nil || more || n != int64(len(tc.deleted)) {
					t.Fatalf("purged %d (more %v) %v, want %d", n, more, err, len(tc.deleted))
				}
				for name, id := range ids {
					gone := strings.Contains(strings.Join(tc.deleted, ","), name)
					rows, logs := webhookRows(t, db, id)
					if gone && (rows != 0 || logs != 0) {
						t.Errorf("%s: %d rows and %d log rows left, want it deleted with its log", name, rows, logs)
					}
					wantLogs := 1
					if name == "parked" {
						wantLogs = 0
					}
					if !gone && (rows != 1 || logs != wantLogs) {
						t.Errorf("%s: %d rows and %d log rows, want it kept with its log", name, rows, logs)
					}
				}
				// A new event's id is above every id handed out before.
				queueEvents(t, s, "pc", 1, at.Add(tc.purgeAt))
				if id := maxWebhookID(t, db); id <= top {
					t.Fatalf("new event's id %d, want above %d", id, top)
				}
				// Keep 0 keeps everything.
				r.Keep, r.Now = 0, func() time.Time { return at.Add(1000 * day) }
				if n, _, err := r.Purge(ctx); err != nil || n != 0 {
					t.Fatalf("keep 0 purged %d %v", n, err)
				}
			})
		})
	}
}

// A purge transaction looks at limit finished events at most, oldest id
// first, and says when there may be more behind them; the rest go in the
// next batches.
func TestWebhookPurgeBatches(t *testing.T) {
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
		s := NewPaymentStore(db).WithClock(func() time.Time { return at })
		queueEvents(t, s, "pa", 5, at)
		ownWebhooks(t, s, at, "pa")
		evs, err := s.DueWebhooks(ctx, at, 10, true)
		if err != nil || len(evs) != 5 {
			t.Fatalf("claimed %d %v", len(evs), err)
		}
		for _, ev := range evs {
			if err := s.RecordWebhookAttempt(ctx, ev.ID, banking.WebhookAttempt{Attempt: 1, At: at, HTTPStatus: 204}, true, time.Time{}); err != nil {
				t.Fatal(err)
			}
		}
		later := at.Add(time.Hour)
		for _, want := range []struct {
			deleted int
			more    bool
		}{{2, true}, {2, true}, {0, false}} { // the newest of the 5 stays
			n, more, err := s.PurgeWebhooks(ctx, later, 2)
			if err != nil || n != want.deleted || more != want.more {
				t.Fatalf("batch: %d (more %v) %v, want %d (more %v)", n, more, err, want.deleted, want.more)
			}
		}
		if rows, _ := webhookRows(t, db, evs[4].ID); rows != 1 {
			t.Fatalf("the newest event was deleted")
		}
	})
}

// The purge's reads go along banking_payment_webhooks_finished_at on both
// databases, not a scan of the outbox, and in its order, with no sort:
// the candidates (finished before the cutoff, oldest finish first) and
// the rows an older build finished without finished_at. PostgreSQL's
// planner takes a scan of a table this small, so it is told not to where
// it has the choice.
func TestWebhookPurgePlan(t *testing.T) {
	for _, tc := range []struct {
		name  string
		query func(sqldb.Dialect) string
		args  []any
	}{
		{name: "candidates", query: purgeCandidates, args: []any{int64(0), 500}},
		{name: "unstamped", query: unstamped, args: []any{500}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
				text := queryPlan(t, db, tc.query(db.Dialect), tc.args...)
				if !strings.Contains(text, "banking_payment_webhooks_finished_at") || strings.Contains(text, "SCAN w\n") ||
					strings.Contains(text, "SCAN banking_payment_webhooks\n") || strings.Contains(strings.ToUpper(text), "SORT") {
					t.Fatalf("plan of the purge's %s:\n%s", tc.name, text)
				}
			})
		})
	}
}

// queryPlan is the plan's text of query on db, each row's text columns a
// line, with PostgreSQL told to take an index where it can.
func queryPlan(t *testing.T, db *sqldb.DB, query string, args ...any) string {
	t.Helper()
	ctx := context.Background()
	explain := "EXPLAIN QUERY PLAN "
	tx, err := db.W.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if db.Dialect == sqldb.Postgres {
		explain = "EXPLAIN "
		if _, err := tx.ExecContext(ctx, `SET LOCAL enable_seqscan = off`); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := tx.QueryContext(ctx, explain+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	cols, _ := rows.Columns()
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for _, v := range vals {
			switch v := v.(type) {
			case string:
				plan = append(plan, v)
			case []byte:
				plan = append(plan, string(v))
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if testing.Verbose() {
		t.Logf("plan:\n%s", strings.Join(plan, "\n"))
	}
	return strings.Join(plan, "\n") + "\n"
}

// maxWebhookID is the largest id in the outbox.
func maxWebhookID(t *testing.T, db *sqldb.DB) int64 {
	t.Helper()
	var id int64
	if err := db.R.QueryRow(`SELECT COALESCE(MAX(id), 0) FROM banking_payment_webhooks`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// webhookRows counts the outbox rows of id and their delivery log rows.
func webhookRows(t *testing.T, db *sqldb.DB, id int64) (rows, logs int) {
	t.Helper()
	if err := db.R.QueryRow(`SELECT (SELECT COUNT(*) FROM banking_payment_webhooks WHERE id = $1),
		(SELECT COUNT(*) FROM banking_payment_webhook_log WHERE webhook_id = $1)`, id).Scan(&rows, &logs); err != nil {
		t.Fatal(err)
	}
	return rows, logs
}
