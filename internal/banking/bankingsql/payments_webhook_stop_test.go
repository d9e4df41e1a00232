package bankingsql

import (
	"context"
	"net/http"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/banking/bankapi"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// A replica stopping mid-pass (SIGTERM of a rolling restart) releases the
// events it claimed and never started, so another replica sends them at
// once. Before, they waited out the claim's one-minute lease.
func TestWebhookStoppingPassReleasesUnstartedEvents(t *testing.T) {
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		at := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
		s := NewPaymentStore(db)
		queueEvents(t, s, "mv", 3, at)
		rcv := newFairReceiver(t, 0)
		rcv.hang("mv", true) // the first delivery is under way when the replica stops
		clock := &testClock{t: at.Add(time.Hour)}
		d := &banking.WebhookDispatcher{Outbox: s, Now: clock.now, Workers: 1,
			Sender: &bankapi.WebhookSender{Targets: partnerURLs(rcv.srv.URL), Client: &http.Client{Timeout: 30 * time.Second}}}
		ctx, stop := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = d.RunOnce(ctx)
		}()
		for deadline := time.Now().Add(10 * time.Second); rcv.count(rcv.calls, "mv") == 0; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("no delivery started in 10s")
			}
		}
		stop()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Fatal("the pass did not end within 15s of its stop")
		}
		// Another replica, at the same instant: the two events never
		// started are due; the one under way stays claimed (its receiver
		// may have taken it) until its lease ends.
		evs, err := s.DueWebhooks(context.Background(), clock.now(), 32, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != 2 {
			t.Fatalf("%d events due to the other replicas after the stop, want the 2 never started", len(evs))
		}
	})
}

// When the process begins to stop (SIGTERM: Stopping closed, the pass's
// context still live for the grace), the pass starts no further delivery:
// the one under way finishes and is recorded, and the events it never
// started are due to the other replicas at once. Before, the stopping
// replica went on sending its batch one delivery after another for the
// whole grace, the other replicas idle, and cut off whatever was under way
// when the grace ended, which was then sent again after the lease.
func TestWebhookStoppingReplicaStartsNoFurtherDelivery(t *testing.T) {
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		at := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
		s := NewPaymentStore(db)
		queueEvents(t, s, "mv", 3, at)
		rcv := newFairReceiver(t, 500*time.Millisecond)
		clock := &testClock{t: at.Add(time.Hour)}
		stopping := make(chan struct{})
		d := &banking.WebhookDispatcher{Outbox: s, Now: clock.now, Workers: 1, Stopping: stopping,
			Sender: &bankapi.WebhookSender{Targets: partnerURLs(rcv.srv.URL), Client: &http.Client{Timeout: 30 * time.Second}}}
		done := make(chan error, 1)
		go func() {
			_, err := d.RunOnce(context.Background())
			done <- err
		}()
		for deadline := time.Now().Add(10 * time.Second); rcv.count(rcv.calls, "mv") == 0; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("no delivery started in 10s")
			}
		}
		close(stopping)
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("the stopping pass: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("the pass did not end within 15s of the stop")
		}
		if n := deliveredOf(t, db, "mv"); n != 1 {
			t.Errorf("%d events delivered by the stopping replica, want the 1 under way", n)
		}
		evs, err := s.DueWebhooks(context.Background(), clock.now(), 32, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != 2 {
			t.Fatalf("%d events due to the other replicas after the stop, want the 2 never started", len(evs))
		}
	})
}
