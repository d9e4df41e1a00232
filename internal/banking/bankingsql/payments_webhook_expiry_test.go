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

// downSender is a receiver that gives no answer while down and answers 204
// otherwise, keeping what it received.
type downSender struct {
	down     bool
	received []banking.WebhookEvent
}

func (s *downSender) Send(ctx context.Context, ev banking.WebhookEvent) (banking.WebhookSent, error) {
	if s.down {
		return banking.WebhookSent{Format: banking.WebhookFormatJSON}, errors.New("dial tcp 192.0.2.1:443: connect: connection refused")
	}
	s.received = append(s.received, ev)
	return banking.WebhookSent{Status: 204, Format: banking.WebhookFormatJSON}, nil
}

// An event whose receiver is down is probed once per pause with no attempt
// spent, so without an age limit it waits for the receiver however long it
// takes. With MaxAge (--banking-webhook-max-age, 24 h after reference §12,
// past which the partner polls the payment's state) the first claim after
// the limit fails it for good, its delivery log saying why, and the
// receiver's return brings it no late webhook; an event younger than the
// limit is delivered on the receiver's return, and a MaxAge of 0 sets no
// limit.
func TestWebhookDispatcherMaxAge(t *testing.T) {
	for _, tc := range []struct {
		name      string
		maxAge    time.Duration
		backAfter time.Duration // the receiver answers again this long after the event
		delivered bool
	}{
		{name: "older than the limit", maxAge: 24 * time.Hour, backAfter: 25 * time.Hour},
		{name: "younger than the limit", maxAge: 24 * time.Hour, backAfter: 23 * time.Hour, delivered: true},
		{name: "no limit", maxAge: 0, backAfter: 25 * time.Hour, delivered: true},
		{name: "a limit other than a day", maxAge: 90 * time.Minute, backAfter: 2 * time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
				ctx := context.Background()
				at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
				store := NewPaymentStore(db)
				sp := implementedPayment(t, store, "e3000000-0000-4000-8000-000000000001", at)
				recv := &downSender{down: true}
				now := at.Add(time.Second)
				d := &banking.WebhookDispatcher{Outbox: store, Sender: recv, Now: func() time.Time { return now }, MaxAge: tc.maxAge,
					PauseBase: 5 * time.Second, PauseMax: 5 * time.Minute, Workers: 1}
				// Down when the event is queued, and at a probe an hour later.
				for _, step := range []time.Duration{time.Second, time.Hour} {
					now = at.Add(step)
					if _, err := d.RunOnce(ctx); err != nil {
						t.Fatalf("pass at +%s: %v", step, err)
					}
				}
				now = at.Add(tc.backAfter)
				recv.down = false
				for range 3 {
					if _, err := d.RunOnce(ctx); err != nil {
						t.Fatalf("pass at +%s: %v", tc.backAfter, err)
					}
					now = now.Add(10 * time.Minute)
				}
				if got := len(recv.received) == 1; got != tc.delivered || len(recv.received) > 1 {
					t.Fatalf("the receiver got %d webhooks, want delivered %v", len(recv.received), tc.delivered)
				}
				ds, err := store.PartnerDeliveries(ctx, banking.PartnerOfChannel(sp.Channel), 10)
				if err != nil || len(ds) != 1 {
					t.Fatalf("deliveries %+v %v, want one", ds, err)
				}
				dl := ds[0]
				if tc.delivered {
					if last := dl.Log[len(dl.Log)-1]; dl.State != "DELIVERED" || last.HTTPStatus != 204 || last.Attempt != dl.Attempts {
						t.Fatalf("delivery %+v, want delivered by its last attempt", dl)
					}
					return
				}
				reason := "expired after " + map[time.Duration]string{24 * time.Hour: "24h", 90 * time.Minute: "1h30m"}[tc.maxAge]
				last := dl.Log[len(dl.Log)-1]
				// The expiry is logged as an entry of no HTTP status that
				// spends no attempt: it carries the number of the last try.
				if dl.State != "FAILED" || !dl.NextAt.IsZero() || dl.LastError != reason || len(dl.Log) < 2 ||
					last.Error != reason || last.HTTPStatus != 0 || last.Format != "" || last.Attempt != dl.Attempts ||
					dl.Log[len(dl.Log)-2].Attempt != dl.Attempts {
					t.Fatalf("delivery %+v, want failed for good with %q, spending no attempt", dl, reason)
				}
				// Failed for good: no later pass claims it.
				now = now.Add(48 * time.Hour)
				if evs, err := store.DueWebhooks(ctx, now, 10, false); err != nil || len(evs) != 0 {
					t.Fatalf("claimed %+v %v after the expiry", evs, err)
				}
			})
		})
	}
}
