package bankingsql

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/banking/bankapi"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// setOnLookup is a partner's webhook set between the claim of its events
// and their first send: the first look-up of clientID's target sets it.
type setOnLookup struct {
	hooks    *banking.Webhooks
	clientID string
	url      string
	once     sync.Once
	t        *testing.T
}

func (s *setOnLookup) Target(ctx context.Context, clientID string) (banking.WebhookTarget, error) {
	if clientID == s.clientID {
		s.once.Do(func() {
			if _, err := s.hooks.Set(ctx, clientID, s.url, nil, nil); err != nil {
				s.t.Error(err)
			}
		})
	}
	return s.hooks.Target(ctx, clientID)
}

// A partner of the deployment default whose events were claimed as the
// default's, and which sets a receiver of its own before they are sent,
// has them sent there: when that receiver does not answer, its pause is
// charged, not the default's, and the other partners' events go on to the
// default in the same pass. Before, the failure paused the default, and
// with it every partner without a webhook of its own.
func TestWebhookFailureChargedToTheURLSentTo(t *testing.T) {
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		at := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
		s := NewPaymentStore(db)
		queueEvents(t, s, "mv", 2, at)
		queueEvents(t, s, "st", 2, at.Add(time.Second))
		rcv := newFairReceiver(t, 0)
		rcv.hang("mv", true)
		clock := &testClock{t: at.Add(time.Hour)}
		hooks := newDefaultWebhooks(t, s, rcv, clock)
		targets := &setOnLookup{hooks: hooks, clientID: "mv", url: rcv.srv.URL + "/mv", t: t}
		d := &banking.WebhookDispatcher{Outbox: s, Now: clock.now, Workers: 1,
			Sender: &bankapi.WebhookSender{Targets: targets, Client: &http.Client{Timeout: 300 * time.Millisecond}}}
		rcv.pass(t, d)

		if p, err := s.WebhookPause(ctx, banking.DefaultWebhookEndpoint); err != nil || p.Failures != 0 {
			t.Fatalf("the default's pause %+v %v, want none: nothing sent to it failed", p, err)
		}
		if p, err := s.WebhookPause(ctx, "mv"); err != nil || p.Failures != 1 {
			t.Fatalf("mv's pause %+v %v, want one after its receiver's failure", p, err)
		}
		if n := deliveredOf(t, db, "st"); n != 2 {
			t.Errorf("st, on the default: %d of 2 delivered in the pass", n)
		}
		if n := rcv.count(rcv.calls, "mv"); n != 1 {
			t.Errorf("mv's receiver got %d requests, want 1: the pause holds its other event", n)
		}
		if n := attemptsOf(t, db, "mv"); n != 1 {
			t.Errorf("mv: %d attempts counted, want the one that found its receiver down", n)
		}
	})
}
