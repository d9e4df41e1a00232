package bankingsql

import (
	"context"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// finishEvents claims every due event of the outbox at at and records one
// attempt of each at the time finish names for its place in id order:
// delivered (204), else failed for good (400) when fail says so.
func finishEvents(t *testing.T, s *PaymentStore, at time.Time, n int, finish func(i int) (time.Time, bool)) []int64 {
	t.Helper()
	ctx := context.Background()
	evs, err := s.DueWebhooks(ctx, at, n+1, false)
	if err != nil || len(evs) != n {
		t.Fatalf("claimed %d %v, want %d", len(evs), err, n)
	}
	ids := make([]int64, n)
	for i, ev := range evs {
		ids[i] = ev.ID
		if i > 0 && ev.ID < ids[i-1] {
			t.Fatalf("claimed out of id order: %d after %d", ev.ID, ids[i-1])
		}
		when, fail := finish(i)
		a := banking.WebhookAttempt{Attempt: 1, At: when, HTTPStatus: 204}
		if fail {
			a.HTTPStatus = 400
		}
		if err := s.RecordWebhookAttempt(ctx, ev.ID, a, !fail, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	return ids
}

// One purge run reaches every event finished before the retention,
// wherever it lies by id: here 600 events that finished lately (retried
// for weeks) have the lowest ids, ahead of 5 that finished at once, a
// month and more ago. Before, a batch read the first 500 finished events
// by id, found none old enough and the run stopped there: the old events
// waited, however many runs came, until the recent ones aged too.
func TestWebhookPurgeReachesOldEventsBehindRecent(t *testing.T) {
	const recent, old = 600, 5
	day := 24 * time.Hour
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		at := time.Date(2026, 10, 1, 10, 0, 0, 0, time.UTC)
		s := NewPaymentStore(db).WithClock(func() time.Time { return at })
		queueEvents(t, s, "pa", recent+old+1, at)
		ids := finishEvents(t, s, at, recent+old+1, func(i int) (time.Time, bool) {
			if i < recent {
				return at.Add(25 * day), i%2 == 1
			}
			return at.Add(time.Second), i%2 == 1
		})
		r := &banking.WebhookRetention{Outbox: s, Keep: 30 * day, Now: func() time.Time { return at.Add(31 * day) }}
		n, more, err := r.Purge(ctx)
		if err != nil || more || n != old {
			t.Fatalf("purged %d (more %v) %v, want the %d old events", n, more, err, old)
		}
		for i, id := range ids {
			rows, logs := webhookRows(t, db, id)
			gone := i >= recent && i < recent+old
			if gone && (rows != 0 || logs != 0) {
				t.Fatalf("old event %d: %d rows and %d log rows left", i, rows, logs)
			}
			if !gone && (rows != 1 || logs != 1) {
				t.Fatalf("event %d (recent, or the outbox's newest): %d rows and %d log rows, want it kept", i, rows, logs)
			}
		}
		// Once they are old too, the recent ones go, in batches of 500.
		r.Now = func() time.Time { return at.Add(56 * day) }
		if n, more, err := r.Purge(ctx); err != nil || more || n != recent {
			t.Fatalf("later purged %d (more %v) %v, want %d", n, more, err, recent)
		}
	})
}

// A finished row without finished_at, as a process of an older build
// still running beside a migrated one writes it, is stamped by the purge
// with when it finished (its delivery, or its last log entry) and purged
// by that time, not left for good; a young one is only stamped.
func TestWebhookPurgeStampsRowsOfAnOlderBuild(t *testing.T) {
	day := 24 * time.Hour
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		at := time.Date(2026, 10, 1, 10, 0, 0, 0, time.UTC)
		s := NewPaymentStore(db).WithClock(func() time.Time { return at })
		queueEvents(t, s, "pa", 5, at)
		ids := finishEvents(t, s, at, 5, func(i int) (time.Time, bool) {
			return at.Add(time.Duration(i) * 10 * day), i%2 == 1
		})
		if _, err := db.W.ExecContext(ctx, `UPDATE banking_payment_webhooks SET finished_at = NULL`); err != nil {
			t.Fatal(err)
		}
		// At day 41 with 30 days kept, the events finished on days 0 and
		// 10 go; day 20's and 30's stay, stamped; the newest stays.
		n, more, err := s.PurgeWebhooks(ctx, at.Add(11*day), 500)
		if err != nil || more || n != 2 {
			t.Fatalf("purged %d (more %v) %v, want 2", n, more, err)
		}
		for i, id := range ids {
			var finished *int64
			err := db.R.QueryRowContext(ctx, `SELECT finished_at FROM banking_payment_webhooks WHERE id = $1`, id).Scan(&finished)
			switch {
			case i < 2 && err == nil:
				t.Errorf("event %d finished on day %d is left", i, 10*i)
			case i >= 2 && i < 4 && (err != nil || finished == nil || *finished != micros(at.Add(time.Duration(i)*10*day))):
				t.Errorf("event %d: finished_at %v %v, want day %d", i, finished, err, 10*i)
			}
		}
	})
}

// Payments migration 0017 gives the rows finished before it the time the
// purge read until then: a delivered one its delivery, a failed one its
// last log entry, one failed with no log entry its queueing; a pending
// one gets none.
func TestWebhookFinishedAtMigration(t *testing.T) {
	upTo16 := func(ctx context.Context, db *sqldb.DB) error {
		return db.Migrate(ctx, "banking_payments", areaMigrationsUpTo(t, "payments", 16))
	}
	storetest.Each(t, upTo16, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		rows := []struct {
			state       string
			deliveredAt any
			createdAt   any
			logAt       []int64
			want        any
		}{
			{state: "DELIVERED", deliveredAt: int64(700), createdAt: int64(50), logAt: []int64{600, 700}, want: int64(700)},
			{state: "FAILED", createdAt: int64(50), logAt: []int64{300, 900, 800}, want: int64(900)},
			{state: "FAILED", createdAt: int64(50), want: int64(50)},
			{state: "FAILED", want: int64(5)}, // queued before created_at: its event_time
			{state: "PENDING", createdAt: int64(50), logAt: []int64{400}},
		}
		for i, r := range rows {
			var id int64
			if err := db.W.QueryRowContext(ctx, `INSERT INTO banking_payment_webhooks (org_id, external_id, status, comment, event_time, next_at, client_id, state, delivered_at, created_at)
				VALUES ('org1', $1, 'IMPLEMENTED', '', 5, 0, 'p1', $2, $3, $4) RETURNING id`, string(rune('a'+i)), r.state, r.deliveredAt, r.createdAt).Scan(&id); err != nil {
				t.Fatal(err)
			}
			for _, at := range r.logAt {
				if _, err := db.W.ExecContext(ctx, `INSERT INTO banking_payment_webhook_log (webhook_id, attempt, at, http_status, error) VALUES ($1, 1, $2, 500, '')`, id, at); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := MigratePayments(ctx, db); err != nil {
			t.Fatal(err)
		}
		for i, r := range rows {
			var got *int64
			if err := db.R.QueryRowContext(ctx, `SELECT finished_at FROM banking_payment_webhooks WHERE external_id = $1`, string(rune('a'+i))).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if (got == nil) != (r.want == nil) || (got != nil && *got != r.want.(int64)) {
				t.Errorf("%s row %d: finished_at %v, want %v", r.state, i, got, r.want)
			}
		}
	})
}
