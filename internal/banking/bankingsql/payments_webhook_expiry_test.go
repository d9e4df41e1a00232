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
// limit. The age counts from when the event was queued, not from its
// eventTime: an event queued about a status two days old is as young as
// any other (before, it was failed at its first claim).
func TestWebhookDispatcherMaxAge(t *testing.T) {
	for _, tc := range []struct {
		name      string
		maxAge    time.Duration
		backAfter time.Duration // the receiver answers again this long after the event is queued
		statusAge time.Duration // how old its status is when the event is queued
		delivered bool
	}{
		{name: "older than the limit", maxAge: 24 * time.Hour, backAfter: 25 * time.Hour},
		{name: "younger than the limit", maxAge: 24 * time.Hour, backAfter: 23 * time.Hour, delivered: true},
		{name: "no limit", maxAge: 0, backAfter: 25 * time.Hour, delivered: true},
		{name: "a limit other than a day", maxAge: 90 * time.Minute, backAfter: 2 * time.Hour},
		{name: "an old status queued now", maxAge: 24 * time.Hour, statusAge: 48 * time.Hour, backAfter: 23 * time.Hour, delivered: true},
		{name: "an old status queued long ago", maxAge: 24 * time.Hour, statusAge: 48 * time.Hour, backAfter: 25 * time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
				ctx := context.Background()
				at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
				store := NewPaymentStore(db).WithClock(func() time.Time { return at })
				sp := implementedPayment(t, store, "e3000000-0000-4000-8000-000000000001", at.Add(-tc.statusAge))
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

// A claimed event carries when it was queued (the store's clock at the
// write of its outbox row), whichever way it was queued, and not its
// status's time: created with a final status, moved to one later, or
// created with its whole processing walk, whose row is materialized later
// but was queued with its document, at the walk's time.
func TestWebhookEventCreatedAt(t *testing.T) {
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	old := at.Add(-48 * time.Hour)
	for _, tc := range []struct {
		name  string
		queue func(t *testing.T, s *PaymentStore, id string)
		want  time.Time
	}{
		{name: "created final", want: at, queue: func(t *testing.T, s *PaymentStore, id string) {
			implementedPayment(t, s, id, old)
		}},
		{name: "moved to a final status", want: at, queue: func(t *testing.T, s *PaymentStore, id string) {
			if err := s.CreatePayment(context.Background(), storedPayment("org1", id), []banking.StatusChange{{Status: banking.StatusCreated, At: old}}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.AdvancePayment(context.Background(), "org1", id, banking.StatusCreated, nil,
				[]banking.StatusChange{{Status: banking.StatusImplemented, At: old}}); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "created with its walk", want: old, queue: func(t *testing.T, s *PaymentStore, id string) {
			sp := storedPayment("org1", id)
			sp.Status = banking.StatusImplemented
			if err := s.CreateProcessed(context.Background(), sp, old); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
				s := NewPaymentStore(db).WithClock(func() time.Time { return at })
				tc.queue(t, s, "e3000000-0000-4000-8000-000000000002")
				evs, err := s.DueWebhooks(context.Background(), at.Add(time.Second), 10, false)
				if err != nil || len(evs) != 1 {
					t.Fatalf("claimed %+v %v, want one event", evs, err)
				}
				if !evs[0].CreatedAt.Equal(tc.want) || !evs[0].EventTime.Equal(old) {
					t.Fatalf("queued at %s, event time %s; want %s and %s", evs[0].CreatedAt, evs[0].EventTime, tc.want, old)
				}
			})
		})
	}
}
