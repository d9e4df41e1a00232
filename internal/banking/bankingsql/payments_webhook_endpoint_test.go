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

// stateCount is how many of partners' events are in state.
func stateCount(t *testing.T, db *sqldb.DB, state string, partners ...string) int {
	t.Helper()
	n := 0
	for _, p := range partners {
		var c int
		if err := db.R.QueryRowContext(context.Background(), `SELECT COUNT(*) FROM banking_payment_webhooks WHERE client_id = $1 AND state = $2`, p, state).Scan(&c); err != nil {
			t.Fatal(err)
		}
		n += c
	}
	return n
}

// attemptsOf is the attempts partners' events count in all.
func attemptsOf(t *testing.T, db *sqldb.DB, partners ...string) int {
	t.Helper()
	n := 0
	for _, p := range partners {
		var c int
		if err := db.R.QueryRowContext(context.Background(), `SELECT COALESCE(SUM(attempts), 0) FROM banking_payment_webhooks WHERE client_id = $1`, p).Scan(&c); err != nil {
			t.Fatal(err)
		}
		n += c
	}
	return n
}

// The deployment's default URL is one receiver, whoever's events go to it:
// when it stops answering, the partners without a webhook of their own
// are paused as one (one pause row, one doubling, one failed attempt for
// the outage, each such partner's view showing it), while a partner with
// its own receiver goes on; the deliveries that find the receiver down
// again, the probes after each pause and those under way beside the
// failure that found it, spend none of their events' attempts, so an
// outage of half an hour, with three attempts an event, fails no event;
// a partner that sets a receiver of its own during the pause gets its
// events there at once; and once the default answers, every event is
// delivered, once. Each pause ends with one probe of the receiver, not
// one per partner whose events it holds. Before, each partner of the
// default was paused apart
// (three pauses of one receiver, each found by a failure of its own), and
// every probe spent an attempt: the first event of each partner failed
// for good after three probes.
func TestWebhookDefaultEndpointPausedAsOne(t *testing.T) {
	defaults := []string{"d1", "d2", "d3"}
	const perDefault, maxAttempts = 4, 3
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		at := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
		s := NewPaymentStore(db)
		for _, p := range defaults {
			queueEvents(t, s, p, perDefault, at)
		}
		queueEvents(t, s, "own", 3, at)
		rcv := newFairReceiver(t, 0)
		rcv.hang("default", true)
		clock := &testClock{t: at.Add(time.Hour)}
		hooks := newDefaultWebhooks(t, s, rcv, clock)
		if _, err := hooks.Set(ctx, "own", rcv.srv.URL+"/own", nil, nil); err != nil {
			t.Fatal(err)
		}
		d := &banking.WebhookDispatcher{Outbox: s, Now: clock.now, MaxAttempts: maxAttempts,
			Sender: &bankapi.WebhookSender{Targets: hooks, Client: &http.Client{Timeout: 300 * time.Millisecond}}}
		pauses := func() (rows int, failures int) {
			t.Helper()
			if err := db.R.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(MAX(failures), 0) FROM banking_webhook_pauses`).Scan(&rows, &failures); err != nil {
				t.Fatal(err)
			}
			return rows, failures
		}

		rcv.pass(t, d)
		if n := deliveredOf(t, db, "own"); n != 3 {
			t.Fatalf("the partner with its own receiver: %d of 3 delivered", n)
		}
		if rows, failures := pauses(); rows != 1 || failures != 1 {
			t.Fatalf("%d pauses, %d failures in a row, want one pause of the default after one failure", rows, failures)
		}
		if n := attemptsOf(t, db, defaults...); n != 1 {
			t.Fatalf("%d attempts counted after the default failed (%d requests), want 1", n, rcv.count(rcv.calls, "default"))
		}
		for _, p := range defaults {
			v, err := hooks.Get(ctx, p)
			if err != nil || v.Source != "default" || v.PausedUntil.IsZero() || v.FailedInARow != 1 {
				t.Fatalf("%s sees %+v %v, want the default's pause", p, v, err)
			}
		}
		if v, err := hooks.Get(ctx, "own"); err != nil || !v.PausedUntil.IsZero() {
			t.Fatalf("the partner with its own receiver sees %+v %v, want no pause", v, err)
		}
		found := rcv.count(rcv.calls, "default")

		// Half an hour down, a pass every 15 s; d3 names a receiver of
		// its own a minute in.
		for i := range 120 {
			clock.add(15 * time.Second)
			if i == 4 {
				if _, err := hooks.Set(ctx, "d3", rcv.srv.URL+"/d3", nil, nil); err != nil {
					t.Fatal(err)
				}
				rcv.pass(t, d)
				if n := deliveredOf(t, db, "d3"); n != perDefault {
					t.Fatalf("d3 with a receiver of its own: %d of %d delivered at the next pass", n, perDefault)
				}
				continue
			}
			rcv.pass(t, d)
		}
		probes := rcv.count(rcv.calls, "default")
		rows, failures := pauses()
		if n := stateCount(t, db, "FAILED", defaults...); n != 0 || rows != 1 || failures < 4 {
			t.Fatalf("after half an hour down: %d events failed for good, %d pauses, %d failures in a row (%d requests)", n, rows, failures, probes)
		}
		if n := attemptsOf(t, db, "d1", "d2"); n > 1 {
			t.Fatalf("%d attempts counted in an outage of %d requests, want the one that found it", n, probes)
		}
		// One probe a pause, not one per partner of the default.
		if probes-found != failures-1 {
			t.Fatalf("%d requests after the outage was found, in %d pauses: want one a pause", probes-found, failures-1)
		}
		t.Logf("half an hour down: %d requests to the default, %d failures in a row", probes, failures)

		rcv.hang("default", false)
		clock.add(time.Hour)
		for idle := 0; idle < 2; {
			clock.add(15 * time.Second)
			if rcv.pass(t, d) == 0 {
				idle++
			}
		}
		if n := stateCount(t, db, "DELIVERED", append(defaults, "own")...); n != len(defaults)*perDefault+3 {
			t.Fatalf("after the default's return %d of %d delivered", n, len(defaults)*perDefault+3)
		}
		if rows, _ := pauses(); rows != 0 {
			t.Fatalf("%d pauses left after deliveries", rows)
		}
		rcv.mu.Lock()
		defer rcv.mu.Unlock()
		for id, n := range rcv.accepted {
			if n != 1 {
				t.Errorf("%s accepted %d times", id, n)
			}
		}
	})
}

// A partner's own receiver down for half an hour, with three attempts an
// event: the deliveries after each pause (the probes) find it down again
// and spend none of their events' attempts, so no event fails for good
// while it is away, and all arrive, once, after its return. Before, each
// probe was an attempt of the partner's oldest event: three probes failed
// it, then the next, one event every few pauses.
func TestWebhookProbeSpendsNoAttempt(t *testing.T) {
	const events, maxAttempts = 5, 3
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		at := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
		s := NewPaymentStore(db)
		queueEvents(t, s, "solo", events, at)
		ownWebhooks(t, s, at, "solo")
		rcv := newFairReceiver(t, 0)
		rcv.hang("solo", true)
		clock := &testClock{t: at.Add(time.Hour)}
		d := &banking.WebhookDispatcher{Outbox: s, Now: clock.now, MaxAttempts: maxAttempts,
			Sender: &bankapi.WebhookSender{Targets: partnerURLs(rcv.srv.URL), Client: &http.Client{Timeout: 300 * time.Millisecond}}}
		for range 120 {
			rcv.pass(t, d)
			clock.add(15 * time.Second)
		}
		probes := rcv.count(rcv.calls, "solo")
		if n := stateCount(t, db, "FAILED", "solo"); n != 0 || probes < 6 {
			t.Fatalf("after half an hour down: %d events failed for good (%d requests)", n, probes)
		}
		checkAttempts(t, db, "solo", 1)
		rcv.hang("solo", false)
		clock.add(time.Hour)
		for idle := 0; idle < 2; {
			if rcv.pass(t, d) == 0 {
				idle++
			}
			clock.add(15 * time.Second)
		}
		if n := deliveredOf(t, db, "solo"); n != events {
			t.Fatalf("after the receiver's return %d of %d delivered", n, events)
		}
		checkAttempts(t, db, "solo", events+1)
	})
}
