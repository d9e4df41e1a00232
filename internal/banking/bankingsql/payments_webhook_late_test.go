package bankingsql

import (
	"context"
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
