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

// An attempt recorded very late, by a sender whose claim ran out long ago,
// for an event another claim delivered and the purge has deleted since,
// records nothing and is no error, whatever its outcome: no delivery log
// row is left for an event that is not there (the purge, reading only
// events, would never delete it), and no outbox row comes back. Before,
// the log row was written, for good.
func TestWebhookLateAttemptOfPurgedEvent(t *testing.T) {
	day := 24 * time.Hour
	for _, tc := range []struct {
		name      string
		status    int
		delivered bool
		retry     bool
	}{
		{name: "delivered", status: 204, delivered: true},
		{name: "to be retried", status: 503, retry: true},
		{name: "failed for good", status: 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
				ctx := context.Background()
				at := time.Date(2026, 10, 1, 10, 0, 0, 0, time.UTC)
				s := NewPaymentStore(db).WithClock(func() time.Time { return at })
				queueEvents(t, s, "pa", 2, at)
				late, err := s.DueWebhooks(ctx, at, 10, false)
				if err != nil || len(late) != 2 {
					t.Fatalf("first claim %d %v", len(late), err)
				}
				// The first claim's lease ends with nothing recorded: a
				// second claim delivers both.
				again := at.Add(2 * webhookLease)
				ids := finishEvents(t, s, again, 2, func(int) (time.Time, bool) { return again, false })
				if n, _, err := s.PurgeWebhooks(ctx, again.Add(day), 500); err != nil || n != 1 {
					t.Fatalf("purged %d %v, want the older event", n, err)
				}
				a := banking.WebhookAttempt{Attempt: 1, At: at.Add(40 * day), HTTPStatus: tc.status, Format: banking.WebhookFormatJSON}
				var next time.Time
				if tc.retry {
					next = a.At.Add(time.Minute)
				}
				if err := s.RecordWebhookAttempt(ctx, ids[0], a, tc.delivered, next); err != nil {
					t.Fatalf("late attempt of a purged event: %v, want none", err)
				}
				if rows, logs := webhookRows(t, db, ids[0]); rows != 0 || logs != 0 {
					t.Fatalf("purged event: %d rows and %d log rows after a late attempt, want none", rows, logs)
				}
				// The same late attempt of the event still there is
				// recorded as before.
				if err := s.RecordWebhookAttempt(ctx, ids[1], a, tc.delivered, next); err != nil {
					t.Fatal(err)
				}
				if rows, logs := webhookRows(t, db, ids[1]); rows != 1 || logs != 2 {
					t.Fatalf("kept event: %d rows and %d log rows, want its two attempts", rows, logs)
				}
			})
		})
	}
}

// purgingSender deletes each event it is given from the outbox, with its
// log, as the purge does an event another claim delivered meanwhile, and
// then answers 204: the dispatcher records a delivery of a deleted event.
type purgingSender struct {
	db   *sqldb.DB
	sent []int64
}

func (p *purgingSender) Send(ctx context.Context, ev banking.WebhookEvent) (banking.WebhookSent, error) {
	p.sent = append(p.sent, ev.ID)
	for _, q := range []string{`DELETE FROM banking_payment_webhooks WHERE id = $1`, `DELETE FROM banking_payment_webhook_log WHERE webhook_id = $1`} {
		if _, err := p.db.W.ExecContext(ctx, q, ev.ID); err != nil {
			return banking.WebhookSent{}, err
		}
	}
	return banking.WebhookSent{Status: 204, Format: banking.WebhookFormatJSON}, nil
}

// A dispatcher whose delivered event was purged while it was being sent
// ends its pass without an error and leaves no log row behind.
func TestWebhookDispatcherAttemptOfPurgedEvent(t *testing.T) {
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		at := time.Date(2026, 10, 1, 10, 0, 0, 0, time.UTC)
		s := NewPaymentStore(db).WithClock(func() time.Time { return at })
		queueEvents(t, s, "pa", 1, at)
		sender := &purgingSender{db: db}
		d := &banking.WebhookDispatcher{Outbox: s, Now: func() time.Time { return at }, Workers: 1, Sender: sender}
		if n, err := d.RunOnce(ctx); err != nil || n != 1 || len(sender.sent) != 1 {
			t.Fatalf("pass claimed %d, sent %d: %v", n, len(sender.sent), err)
		}
		if rows, logs := webhookRows(t, db, sender.sent[0]); rows != 0 || logs != 0 {
			t.Fatalf("%d rows and %d log rows of the purged event, want none", rows, logs)
		}
	})
}

// A claim whose lease ran out (a store outage held its record back) may
// record its attempt after a later claim finished the event. The finished
// state stands, so that a late 503 does not send a delivered event again
// and a late 400 does not fail it; a late delivery turns a failed event
// delivered, the partner having got it. The log keeps every request that
// went out, and nothing that sent none (an expiry, or a try that failed on
// our side before its request went out).
func TestWebhookLateAttemptOfFinishedEvent(t *testing.T) {
	for _, tc := range []struct {
		name          string
		first         int // the later claim's answer, which finishes the event
		late          banking.WebhookAttempt
		lateDelivered bool
		lateRetry     bool
		wantState     string
		wantLogs      int
	}{
		{name: "503 after a delivery", first: 204, late: banking.WebhookAttempt{HTTPStatus: 503, Format: banking.WebhookFormatJSON}, lateRetry: true, wantState: "DELIVERED", wantLogs: 2},
		{name: "400 after a delivery", first: 204, late: banking.WebhookAttempt{HTTPStatus: 400, Format: banking.WebhookFormatJSON}, wantState: "DELIVERED", wantLogs: 2},
		{name: "expiry after a delivery", first: 204, late: banking.WebhookAttempt{Error: "expired after 24h0m0s"}, wantState: "DELIVERED", wantLogs: 1},
		{name: "not sent after a delivery", first: 204, late: banking.WebhookAttempt{Error: "no bank signing key for a jose webhook", Format: banking.WebhookFormatJOSE, NotSent: true}, lateRetry: true, wantState: "DELIVERED", wantLogs: 1},
		{name: "not sent after a failure", first: 400, late: banking.WebhookAttempt{Error: "no bank signing key for a jose webhook", Format: banking.WebhookFormatJOSE, NotSent: true}, lateRetry: true, wantState: "FAILED", wantLogs: 1},
		{name: "503 after a failure", first: 400, late: banking.WebhookAttempt{HTTPStatus: 503, Format: banking.WebhookFormatJSON}, lateRetry: true, wantState: "FAILED", wantLogs: 2},
		{name: "delivery after a failure", first: 400, late: banking.WebhookAttempt{HTTPStatus: 200, Format: banking.WebhookFormatJSON}, lateDelivered: true, wantState: "DELIVERED", wantLogs: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
				ctx := context.Background()
				at := time.Date(2026, 10, 1, 10, 0, 0, 0, time.UTC)
				s := NewPaymentStore(db).WithClock(func() time.Time { return at })
				queueEvents(t, s, "pa", 1, at)
				if late, err := s.DueWebhooks(ctx, at, 10, false); err != nil || len(late) != 1 {
					t.Fatalf("first claim %d %v", len(late), err)
				}
				again := at.Add(2 * webhookLease)
				ids := finishEvents(t, s, again, 1, func(int) (time.Time, bool) { return again, tc.first >= 300 })
				a := tc.late
				a.Attempt, a.At = 1, again.Add(time.Second)
				var next time.Time
				if tc.lateRetry {
					next = a.At.Add(time.Minute)
				}
				if err := s.RecordWebhookAttempt(ctx, ids[0], a, tc.lateDelivered, next); err != nil {
					t.Fatal(err)
				}
				var state string
				var nextAt int64
				if err := db.R.QueryRow(`SELECT state, next_at FROM banking_payment_webhooks WHERE id = $1`, ids[0]).Scan(&state, &nextAt); err != nil {
					t.Fatal(err)
				}
				if state != tc.wantState || nextAt != 0 {
					t.Fatalf("state %s next_at %d after the late attempt, want %s and none", state, nextAt, tc.wantState)
				}
				if _, logs := webhookRows(t, db, ids[0]); logs != tc.wantLogs {
					t.Fatalf("%d log rows, want %d", logs, tc.wantLogs)
				}
				if due, err := s.DueWebhooks(ctx, again.Add(time.Hour), 10, false); err != nil || len(due) != 0 {
					t.Fatalf("due after the late attempt: %d %v, want none", len(due), err)
				}
			})
		})
	}
}

// finishingSender finishes each event it is given as a later claim would
// (delivered, by a direct update that logs nothing), and then fails on our
// side before sending anything, as a jose event without a bank key does.
type finishingSender struct {
	db   *sqldb.DB
	at   time.Time
	sent []int64
}

func (f *finishingSender) Send(ctx context.Context, ev banking.WebhookEvent) (banking.WebhookSent, error) {
	f.sent = append(f.sent, ev.ID)
	at := f.at.UnixMicro()
	if _, err := f.db.W.ExecContext(ctx, `UPDATE banking_payment_webhooks SET state = 'DELIVERED', next_at = 0, delivered_at = $2, finished_at = $2 WHERE id = $1`, ev.ID, at); err != nil {
		return banking.WebhookSent{}, err
	}
	return banking.WebhookSent{Format: banking.WebhookFormatJOSE}, &banking.NotSentError{Err: errors.New("no bank signing key for a jose webhook")}
}

// The dispatcher marks a try that failed before its request went out, so
// that when a later claim finished the event meanwhile, the late try adds
// no row to the event's log: the partner's log lists only requests that
// were made. Before, it was logged as an attempt with the jose format.
func TestWebhookDispatcherNotSentAfterFinish(t *testing.T) {
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		at := time.Date(2026, 10, 1, 10, 0, 0, 0, time.UTC)
		s := NewPaymentStore(db).WithClock(func() time.Time { return at })
		queueEvents(t, s, "pa", 1, at)
		sender := &finishingSender{db: db, at: at}
		d := &banking.WebhookDispatcher{Outbox: s, Now: func() time.Time { return at }, Workers: 1, Sender: sender, BaseBackoff: time.Minute}
		if n, err := d.RunOnce(ctx); err != nil || n != 1 || len(sender.sent) != 1 {
			t.Fatalf("pass claimed %d, sent %d: %v", n, len(sender.sent), err)
		}
		var state string
		if err := db.R.QueryRow(`SELECT state FROM banking_payment_webhooks WHERE id = $1`, sender.sent[0]).Scan(&state); err != nil {
			t.Fatal(err)
		}
		if rows, logs := webhookRows(t, db, sender.sent[0]); state != "DELIVERED" || rows != 1 || logs != 0 {
			t.Fatalf("state %s, %d rows and %d log rows after a try not sent, want DELIVERED, 1 and none", state, rows, logs)
		}
	})
}
