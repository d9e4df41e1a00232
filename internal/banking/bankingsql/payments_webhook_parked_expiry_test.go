package bankingsql

import (
	"context"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// The events of a partner with no webhook, on a deployment with no default
// URL, are parked and never claimed; past --banking-webhook-max-age they
// are failed for good like any other ("expired after 24h" in the delivery
// log, no attempt spent), within a park (an hour) of the limit, so the
// outbox does not keep them for good; a younger one stays parked. Whether
// another partner has a webhook or none has makes no difference. Before,
// they stayed PARKED (or, with no partner configured, PENDING) for ever.
func TestWebhookParkedEventsExpire(t *testing.T) {
	for _, tc := range []struct {
		name string
		own  []string // partners with a webhook of their own
	}{
		{name: "no partner has a webhook"},
		{name: "another partner has one", own: []string{"own"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
				ctx := context.Background()
				at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
				clock := &testClock{t: at}
				s := NewPaymentStore(db).WithClock(clock.now)
				queueEvents(t, s, "np", 1, at)
				ownWebhooks(t, s, at, tc.own...)
				recv := &downSender{}
				d := &banking.WebhookDispatcher{Outbox: s, Sender: recv, Now: clock.now, ConfiguredOnly: true, MaxAge: 24 * time.Hour}
				pass := func(at time.Time) {
					t.Helper()
					clock.set(at)
					if _, err := d.RunOnce(ctx); err != nil {
						t.Fatal(err)
					}
				}
				pass(at.Add(time.Second))
				pass(at.Add(20 * time.Hour))
				queueEvents(t, s, "nq", 1, at.Add(20*time.Hour)) // younger, of a partner also without a URL
				for _, step := range []time.Duration{21 * time.Hour, 23 * time.Hour, 24 * time.Hour} {
					pass(at.Add(step))
				}
				if ds := deliveriesOf(t, s, "np"); ds[0].State != "PARKED" {
					t.Fatalf("at the limit %+v, want still parked", ds[0])
				}
				pass(at.Add(25*time.Hour + time.Second))
				dl := deliveriesOf(t, s, "np")[0]
				const reason = "expired after 24h"
				if dl.State != "FAILED" || dl.LastError != reason || dl.Attempts != 0 || !dl.NextAt.IsZero() || len(dl.Log) != 1 ||
					dl.Log[0].Error != reason || dl.Log[0].HTTPStatus != 0 || dl.Log[0].Attempt != 0 || dl.Log[0].Format != "" ||
					!dl.Log[0].At.Equal(at.Add(25*time.Hour+time.Second)) {
					t.Fatalf("past the limit %+v, want failed for good with %q, no attempt spent", dl, reason)
				}
				if ds := deliveriesOf(t, s, "nq"); ds[0].State != "PARKED" || len(ds[0].Log) != 0 {
					t.Fatalf("the younger event %+v, want still parked", ds[0])
				}
				if len(recv.received) != 0 {
					t.Fatalf("sent %d webhooks with no URL to send to", len(recv.received))
				}
				// Failed for good: a URL set later brings it no webhook.
				ownWebhooks(t, s, at, "np")
				if evs, err := s.DueWebhooks(ctx, at.Add(26*time.Hour), 10, true); err != nil || len(evs) != 0 {
					t.Fatalf("claimed %+v %v after the expiry", evs, err)
				}
			})
		})
	}
}

// deliveriesOf is partner's delivery log; it has at least one event.
func deliveriesOf(t *testing.T, s *PaymentStore, partner string) []banking.WebhookDelivery {
	t.Helper()
	ds, err := s.PartnerDeliveries(context.Background(), partner, 10)
	if err != nil || len(ds) == 0 {
		t.Fatalf("%s's deliveries %+v %v", partner, ds, err)
	}
	return ds
}

func (c *testClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}
