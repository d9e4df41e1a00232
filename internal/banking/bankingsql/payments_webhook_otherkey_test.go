package bankingsql

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/banking/bankapi"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// A replica started with other webhook keys than the rest (a data
// directory not copied, a --banking-webhook-key left out) cannot open the
// secrets the others sealed. Its dispatcher must leave their events to a
// replica that can: nothing sent, no attempt spent and no pause of the
// partner's receiver, which every replica on the database honours. Before,
// the failed look-up counted as a delivery that got no answer, so the
// mis-keyed replica spent the events' attempts and paused the receiver for
// all.
func TestWebhookSecretOfOtherKeysLeftToReplicaHoldingThem(t *testing.T) {
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		at := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
		s := NewPaymentStore(db)
		queueEvents(t, s, "mv", 2, at)
		rcv := newFairReceiver(t, 0)
		clock := &testClock{t: at.Add(time.Hour)}
		hooks := newDefaultWebhooks(t, s, rcv, clock) // sealing under the fixed key
		if _, err := hooks.Set(ctx, "mv", rcv.srv.URL+"/mv", nil, nil); err != nil {
			t.Fatal(err)
		}
		otherBox, err := banking.NewSecretBox(bytes.Repeat([]byte{9}, banking.WebhookKeySize))
		if err != nil {
			t.Fatal(err)
		}
		otherHooks := *hooks
		otherHooks.Box = otherBox
		client := &http.Client{Timeout: 2 * time.Second}
		misKeyed := &banking.WebhookDispatcher{Outbox: s, Now: clock.now, Workers: 1,
			Sender: &bankapi.WebhookSender{Targets: &otherHooks, Client: client}}
		if _, err := misKeyed.RunOnce(ctx); !errors.Is(err, banking.ErrSealedSecret) {
			t.Errorf("the mis-keyed replica's pass: %v, want it to report the secret it cannot open", err)
		}
		rcv.settle(t)
		if n := rcv.count(rcv.calls, "mv"); n != 0 {
			t.Fatalf("the mis-keyed replica sent %d requests", n)
		}
		if n := attemptsOf(t, db, "mv"); n != 0 {
			t.Errorf("%d attempts spent by the replica that cannot open the secret, want none", n)
		}
		if p, err := s.WebhookPause(ctx, "mv"); err != nil || p.Failures != 0 {
			t.Errorf("mv's receiver paused (%+v, %v) by the replica that never reached it", p, err)
		}

		keyed := &banking.WebhookDispatcher{Outbox: s, Now: clock.now, Workers: 1,
			Sender: &bankapi.WebhookSender{Targets: hooks, Client: client}}
		for deadline := time.Now().Add(10 * time.Second); deliveredOf(t, db, "mv") < 2; {
			if time.Now().After(deadline) {
				t.Fatalf("%d of 2 events delivered by the replica holding the key", deliveredOf(t, db, "mv"))
			}
			rcv.pass(t, keyed)
		}
		if n := attemptsOf(t, db, "mv"); n != 2 {
			t.Errorf("%d attempts in all, want one an event", n)
		}
	})
}
