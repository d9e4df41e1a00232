package bankingsql

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/banking/bankapi"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// queueEvents queues n final-status events of partner's documents, due at
// at (documents refused by the bank: their outbox rows are written with
// them).
func queueEvents(t *testing.T, s *PaymentStore, partner string, n int, at time.Time) {
	t.Helper()
	for i := range n {
		// The partner's name (up to 4 bytes) in hex makes its ids unique.
		sp := storedPayment("org1", fmt.Sprintf("%s-0000-4000-8000-%012d", (hex.EncodeToString([]byte(partner)) + "00000000")[:8], i))
		sp.Channel = banking.PartnerChannel(partner)
		h := []banking.StatusChange{{Status: banking.StatusCreated, At: at}, {Status: banking.StatusRefusedByBank, Comment: "нет", At: at}}
		if err := s.CreatePayment(context.Background(), sp, h); err != nil {
			t.Fatal(err)
		}
	}
}

// ownWebhooks gives each partner a webhook setting of its own, so that
// each is an endpoint of its own to pauses (the URL stored is not the one
// partnerURLs sends to; partners without a setting share the deployment
// default, paused as one).
func ownWebhooks(t *testing.T, s *PaymentStore, at time.Time, partners ...string) {
	t.Helper()
	for _, p := range partners {
		if err := s.SetPartnerWebhook(context.Background(), banking.PartnerWebhook{ClientID: p, URL: "https://" + p + ".example/hook", SealedSecret: "x", UpdatedAt: at}); err != nil {
			t.Fatal(err)
		}
	}
}

// partnerURLs sends every partner's webhooks to the fake receiver's
// /<client_id>, so the receiver tells the partners apart.
type partnerURLs string

func (u partnerURLs) Target(_ context.Context, clientID string) (banking.WebhookTarget, error) {
	return banking.WebhookTarget{URL: string(u) + "/" + clientID, Secret: []byte("s")}, nil
}

// fairReceiver is partners' webhook receivers in one: it counts the
// requests of each partner, the most under way at once and the events
// accepted, and hangs, answering nothing, for the partners told to.
type fairReceiver struct {
	srv      *httptest.Server
	delay    time.Duration // before each answer
	mu       sync.Mutex
	hanging  map[string]bool
	calls    map[string]int
	running  map[string]int
	most     map[string]int
	accepted map[string]int // externalId → times answered 204
}

func newFairReceiver(t *testing.T, delay time.Duration) *fairReceiver {
	r := &fairReceiver{delay: delay, hanging: map[string]bool{}, calls: map[string]int{}, running: map[string]int{}, most: map[string]int{}, accepted: map[string]int{}}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *fairReceiver) serve(w http.ResponseWriter, req *http.Request) {
	partner := strings.TrimPrefix(req.URL.Path, "/")
	var body struct{ ExternalID string }
	raw, _ := io.ReadAll(req.Body)
	_ = json.Unmarshal(raw, &body)
	r.mu.Lock()
	r.calls[partner]++
	r.running[partner]++
	r.most[partner] = max(r.most[partner], r.running[partner])
	hang := r.hanging[partner]
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.running[partner]--
		r.mu.Unlock()
	}()
	if hang {
		<-req.Context().Done() // until the sender gives up
		return
	}
	time.Sleep(r.delay)
	r.mu.Lock()
	r.accepted[body.ExternalID]++
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// pass runs one pass of d and settles: the number of events it claimed,
// with every request it made over at the receiver.
func (r *fairReceiver) pass(t *testing.T, d *banking.WebhookDispatcher) int {
	t.Helper()
	n, err := d.RunOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r.settle(t)
	return n
}

// settle waits until no request is under way: a request the sender gave up
// on ends at the receiver a moment later, and must not count as under way
// with the next pass's.
func (r *fairReceiver) settle(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		r.mu.Lock()
		busy := 0
		for _, n := range r.running {
			busy += n
		}
		r.mu.Unlock()
		if busy == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d requests still under way at the receiver", busy)
		}
	}
}

func (r *fairReceiver) hang(partner string, on bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hanging[partner] = on
}

func (r *fairReceiver) count(m map[string]int, key string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return m[key]
}

// testClock is a dispatcher's clock the test moves; workers read it.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// newDefaultWebhooks is the partners' webhook settings over s, with the
// deployment default at rcv's /default (secret "default-secret"), secrets
// sealed under a fixed key, URLs to the test's loopback receiver allowed,
// and clock's time: the Webhooks a dispatcher's sender looks targets up
// in when a test needs the real look-up, default and all.
func newDefaultWebhooks(t *testing.T, s *PaymentStore, rcv *fairReceiver, clock *testClock) *banking.Webhooks {
	t.Helper()
	box, err := banking.NewSecretBox(bytes.Repeat([]byte{7}, banking.WebhookKeySize))
	if err != nil {
		t.Fatal(err)
	}
	return &banking.Webhooks{Store: s, Box: box, Now: clock.now, URLs: banking.WebhookURLPolicy{AllowHTTP: true, AllowPrivate: true},
		Default: banking.WebhookTarget{URL: rcv.srv.URL + "/default", Secret: []byte("default-secret")}}
}

// deliveredOf is how many of partner's events the outbox has DELIVERED.
func deliveredOf(t *testing.T, db *sqldb.DB, partner string) int {
	t.Helper()
	var n int
	if err := db.R.QueryRowContext(context.Background(), `SELECT COUNT(*) FROM banking_payment_webhooks WHERE client_id = $1 AND state = 'DELIVERED'`, partner).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// checkAttempts fails unless partner's events count exactly want attempts
// and the log holds them, event by event: a deferral is not an attempt,
// and neither is a delivery to a receiver already found down (the probe
// after a pause, or one under way beside the failure that found it).
func checkAttempts(t *testing.T, db *sqldb.DB, partner string, want int) {
	t.Helper()
	var attempts, logged, untruthful int
	if err := db.R.QueryRowContext(context.Background(), `SELECT COALESCE(SUM(attempts), 0),
			(SELECT COUNT(*) FROM banking_payment_webhook_log l JOIN banking_payment_webhooks w ON w.id = l.webhook_id WHERE w.client_id = $1),
			COALESCE(SUM(CASE WHEN attempts <> (SELECT COUNT(*) FROM banking_payment_webhook_log l WHERE l.webhook_id = w.id) THEN 1 ELSE 0 END), 0)
		FROM banking_payment_webhooks w WHERE client_id = $1`, partner).Scan(&attempts, &logged, &untruthful); err != nil {
		t.Fatal(err)
	}
	if attempts != want || logged != want || untruthful != 0 {
		t.Errorf("%s: %d attempts counted, %d logged (%d events disagree with their log), want %d", partner, attempts, logged, untruthful, want)
	}
}

// A partner whose receiver hangs, with 200 due events older than every
// other partner's, delays nobody else: the 5 other partners' events are
// delivered within two passes of the dispatcher, each pass a fresh store
// and dispatcher (a restart, or another process: the pause is in the
// database). The hanging partner's events count one attempt for its
// outage, the delivery that found the receiver down: the few probes of
// the minutes it stays down spend none, and all are delivered once it
// recovers. Before the per-partner cap and pause, the first passes sent 32
// of its events each, 8 at a time, and the others waited seven passes
// behind its backlog.
func TestWebhookHangingPartnerDoesNotStarveOthers(t *testing.T) {
	const backlog, perOther = 200, 3
	others := []string{"p1", "p2", "p3", "p4", "p5"}
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		at := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
		s := NewPaymentStore(db)
		queueEvents(t, s, "hang", backlog, at)
		for _, p := range others {
			queueEvents(t, s, p, perOther, at.Add(time.Second))
		}
		ownWebhooks(t, s, at, append(others, "hang")...)
		rcv := newFairReceiver(t, 0)
		rcv.hang("hang", true)
		clock := &testClock{t: at.Add(time.Hour)}
		pass := func() int {
			t.Helper()
			d := &banking.WebhookDispatcher{Outbox: NewPaymentStore(db), Now: clock.now,
				Sender: &bankapi.WebhookSender{Targets: partnerURLs(rcv.srv.URL), Client: &http.Client{Timeout: 500 * time.Millisecond}}}
			n := rcv.pass(t, d)
			clock.add(2 * time.Second) // the default --banking-webhook-interval
			return n
		}
		pass()
		pass()
		for _, p := range others {
			if n := deliveredOf(t, db, p); n != perOther {
				t.Errorf("after two passes %s has %d of %d events delivered", p, n, perOther)
			}
		}
		if n := rcv.count(rcv.calls, "hang"); n > 4 {
			t.Errorf("the hanging receiver got %d requests in two passes, want at most 2 a pass", n)
		}
		checkAttempts(t, db, "hang", 1)
		t.Logf("two passes: the hanging receiver got %d requests", rcv.count(rcv.calls, "hang"))

		// Five more minutes of the outage, a pass every 15 s: the pause
		// doubles, so the receiver is tried a few times, not 32 a pass.
		for range 20 {
			clock.add(13 * time.Second)
			pass()
		}
		tried := rcv.count(rcv.calls, "hang")
		if tried > 20 {
			t.Errorf("the hanging receiver got %d requests in 5 minutes", tried)
		}
		checkAttempts(t, db, "hang", 1)
		t.Logf("5 more minutes down: %d requests in all", tried)
		if n := rcv.count(rcv.most, "hang"); n > 2 {
			t.Errorf("%d deliveries to the hanging receiver under way at once", n)
		}

		// It recovers: once the pause and the tried events' backoff are
		// over, every event is delivered, once.
		rcv.hang("hang", false)
		clock.add(time.Hour)
		for idle := 0; idle < 2; {
			if pass() == 0 {
				idle++
			}
		}
		if n := deliveredOf(t, db, "hang"); n != backlog {
			t.Errorf("after recovery %d of %d delivered", n, backlog)
		}
		checkAttempts(t, db, "hang", backlog+1)
		rcv.mu.Lock()
		defer rcv.mu.Unlock()
		if len(rcv.accepted) != backlog+len(others)*perOther {
			t.Errorf("%d events accepted, want %d", len(rcv.accepted), backlog+len(others)*perOther)
		}
		for id, n := range rcv.accepted {
			if n != 1 {
				t.Errorf("%s accepted %d times", id, n)
			}
		}
	})
}

// However many of one partner's events a batch holds, at most two
// deliveries to it are under way at once, as its receiver counts them;
// the other workers serve the other partners meanwhile. Before the cap a
// batch of one partner's events kept all 8 workers on it.
func TestWebhookPerPartnerInFlightCap(t *testing.T) {
	partners := []string{"a1", "b2", "c3"}
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		at := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
		s := NewPaymentStore(db)
		counts := []int{24, 6, 2} // the first fills most of a batch
		for i, p := range partners {
			queueEvents(t, s, p, counts[i], at.Add(time.Duration(i)*time.Second))
		}
		rcv := newFairReceiver(t, 20*time.Millisecond)
		d := &banking.WebhookDispatcher{Outbox: s, Now: func() time.Time { return at.Add(time.Hour) },
			Sender: &bankapi.WebhookSender{Targets: partnerURLs(rcv.srv.URL), Client: &http.Client{Timeout: 5 * time.Second}}}
		for range 3 {
			if _, err := d.RunOnce(ctx); err != nil {
				t.Fatal(err)
			}
		}
		for i, p := range partners {
			if n := deliveredOf(t, db, p); n != counts[i] {
				t.Errorf("%s: %d of %d delivered", p, n, counts[i])
			}
			if n := rcv.count(rcv.most, p); n > 2 {
				t.Errorf("%s: %d deliveries under way at once, want at most 2", p, n)
			}
		}
	})
}

// Two processes dispatching at once on one database, with a hanging
// partner and two healthy ones: the pause and the releases neither
// deadlock with the claims (every pass ends without an error), nor lose
// or double an event, nor count an attempt but the one that found the
// receiver down.
func TestWebhookPauseAcrossDispatchers(t *testing.T) {
	others := []string{"q1", "q2"}
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		at := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
		s := NewPaymentStore(db)
		queueEvents(t, s, "hang", 100, at)
		for _, p := range others {
			queueEvents(t, s, p, 20, at)
		}
		ownWebhooks(t, s, at, append(others, "hang")...)
		rcv := newFairReceiver(t, time.Millisecond)
		rcv.hang("hang", true)
		clock := &testClock{t: at.Add(time.Hour)}
		dispatchers := make([]*banking.WebhookDispatcher, 2)
		for i := range dispatchers {
			dispatchers[i] = &banking.WebhookDispatcher{Outbox: NewPaymentStore(db), Now: clock.now,
				Sender: &bankapi.WebhookSender{Targets: partnerURLs(rcv.srv.URL), Client: &http.Client{Timeout: 500 * time.Millisecond}}}
		}
		passes := func(n int) {
			for range n {
				var wg sync.WaitGroup
				errs := make([]error, len(dispatchers))
				for i, d := range dispatchers {
					wg.Go(func() { _, errs[i] = d.RunOnce(ctx) })
				}
				wg.Wait()
				for _, err := range errs {
					if err != nil {
						t.Fatal(err)
					}
				}
				rcv.settle(t)
				clock.add(3 * time.Second)
			}
		}
		passes(4)
		for _, p := range others {
			if n := deliveredOf(t, db, p); n != 20 {
				t.Errorf("%s: %d of 20 delivered", p, n)
			}
		}
		checkAttempts(t, db, "hang", 1)
		rcv.hang("hang", false)
		clock.add(time.Hour)
		passes(6)
		if n := deliveredOf(t, db, "hang"); n != 100 {
			t.Errorf("after recovery %d of 100 delivered", n)
		}
		checkAttempts(t, db, "hang", 101)
		rcv.mu.Lock()
		defer rcv.mu.Unlock()
		for id, n := range rcv.accepted {
			if n != 1 {
				t.Errorf("%s accepted %d times", id, n)
			}
		}
	})
}

// oneURL sends the webhooks of the partners without a setting of their own
// to the fake receiver's /default, one receiver as the deployment default
// is, and those of the others to /<client_id>, as Webhooks.Target does.
type oneURL struct {
	url string
	own map[string]bool
}

func (u oneURL) Target(_ context.Context, clientID string) (banking.WebhookTarget, error) {
	if u.own[clientID] {
		return banking.WebhookTarget{URL: u.url + "/" + clientID, Secret: []byte("s")}, nil
	}
	return banking.WebhookTarget{URL: u.url + "/default", Secret: []byte("s")}, nil
}

// The cap is per receiver, not per partner: the partners without a webhook
// of their own share the deployment default's receiver, which gets at most
// two deliveries at once whatever their number, while a partner with its
// own receiver keeps a cap of its own beside them. Before, each partner of
// the default had two under way, three partners six at one receiver.
func TestWebhookInFlightCapPerReceiver(t *testing.T) {
	for _, tc := range []struct {
		name string
		own  []string // partners with a webhook of their own
	}{
		{name: "three partners on the default"},
		{name: "two on the default beside one of its own", own: []string{"c3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			partners := []string{"a1", "b2", "c3"}
			storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
				at := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
				s := NewPaymentStore(db)
				own := map[string]bool{}
				for _, p := range tc.own {
					own[p] = true
				}
				for i, p := range partners {
					queueEvents(t, s, p, 8, at.Add(time.Duration(i)*time.Second))
				}
				ownWebhooks(t, s, at, tc.own...)
				rcv := newFairReceiver(t, 30*time.Millisecond)
				d := &banking.WebhookDispatcher{Outbox: s, Now: func() time.Time { return at.Add(time.Hour) },
					Sender: &bankapi.WebhookSender{Targets: oneURL{rcv.srv.URL, own}, Client: &http.Client{Timeout: 5 * time.Second}}}
				rcv.pass(t, d)
				for _, p := range partners {
					if n := deliveredOf(t, db, p); n != 8 {
						t.Errorf("%s: %d of 8 delivered", p, n)
					}
				}
				if n := rcv.count(rcv.most, "default"); n > 2 {
					t.Errorf("the default's receiver had %d deliveries under way at once, want at most 2", n)
				}
				for _, p := range tc.own {
					if n := rcv.count(rcv.most, p); n != 2 {
						t.Errorf("%s's own receiver had at most %d deliveries under way at once, want 2 beside the default's", p, n)
					}
				}
			})
		})
	}
}
