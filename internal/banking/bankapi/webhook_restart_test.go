package bankapi

import (
	"context"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/banking/bankingsql"
	"partnerapi/internal/sqlite"
)

// A dispatcher stopped mid-retry loses nothing: a new process (a new
// database handle, store, settings and dispatcher over the same file)
// finishes every delivery, and the partner accepts each event exactly once.
func TestWebhookDeliverySurvivesRestart(t *testing.T) {
	ids := []string{newUUID(950), newUUID(951), newUUID(952)}
	script := map[string][]int{ids[0]: {503, 503}, ids[1]: {500}, ids[2]: {429, 502, 504}}
	sink := newPartnerSink(t, "partner-one-secret-0001", script)
	e := newHookEnv(t, banking.WebhookTarget{})
	if st, _, raw := e.do("PUT", webhookBase, "p1", `{"url":"`+sink.srv.URL+`","secret":"partner-one-secret-0001"}`); st != 200 {
		t.Fatal(raw)
	}
	for _, id := range ids {
		e.pay("p1", id)
	}

	// The first process runs until every event has failed once, then stops
	// between retries.
	ctx, cancel := context.WithCancel(context.Background())
	first := &banking.WebhookDispatcher{Outbox: e.store, Sender: &WebhookSender{Targets: e.hooks, URLs: loopbackURLs}, ConfiguredOnly: true,
		BaseBackoff: 200 * time.Millisecond, PauseBase: -1} // each event's own retries, not the partner's pause
	done := make(chan struct{})
	go func() { defer close(done); first.Run(ctx, 5*time.Millisecond) }()
	waitFor(t, func() bool {
		ds, err := e.hooks.Deliveries(context.Background(), "partner-1", 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			if d.Attempts == 0 {
				return false
			}
		}
		return len(ds) == len(ids)
	})
	cancel()
	<-done
	if err := e.db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := sink.snapshot(); len(ok) != 0 {
		t.Fatalf("accepted before the restart: %v", ok)
	}

	// The second process over the same data directory.
	db, err := sqlite.Open(context.Background(), e.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	store := bankingsql.NewPaymentStore(db)
	hooks := &banking.Webhooks{Store: store, Box: e.box, URLs: loopbackURLs}
	second := &banking.WebhookDispatcher{Outbox: store, Sender: &WebhookSender{Targets: hooks, URLs: loopbackURLs}, ConfiguredOnly: true,
		BaseBackoff: 20 * time.Millisecond, PauseBase: -1}
	ctx2, cancel2 := context.WithCancel(context.Background())
	done2 := make(chan struct{})
	go func() { defer close(done2); second.Run(ctx2, 5*time.Millisecond) }()
	waitFor(t, func() bool {
		ds, err := hooks.Deliveries(context.Background(), "partner-1", 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			if d.State != "DELIVERED" {
				return false
			}
		}
		return true
	})
	// Give a duplicate send the chance to happen before looking.
	time.Sleep(100 * time.Millisecond)
	cancel2()
	<-done2
	calls, ok, _ := sink.snapshot()
	ds, _ := hooks.Deliveries(context.Background(), "partner-1", 10)
	for _, d := range ds {
		want := len(script[d.ExternalID]) + 1
		if ok[d.ExternalID] != 1 || calls[d.ExternalID] != want || d.Attempts != want || len(d.Log) != want {
			t.Errorf("%s: accepted %d times, %d calls, %d attempts, log %+v (want 1, %d)", d.ExternalID, ok[d.ExternalID], calls[d.ExternalID], d.Attempts, d.Log, want)
		}
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 20s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// An event of a partner with nowhere to receive it is parked, shown as
// such in its log, and sent as soon as the partner sets a webhook.
func TestWebhookParkedUntilPartnerSets(t *testing.T) {
	sink := newPartnerSink(t, "partner-one-secret-0001", nil)
	e := newHookEnv(t, banking.WebhookTarget{})
	// Another partner has a URL, so the dispatcher looks at the outbox.
	if st, _, raw := e.do("PUT", webhookBase, "p2", `{"url":"https://two.example/hook"}`); st != 200 {
		t.Fatal(raw)
	}
	id := newUUID(970)
	e.pay("p1", id)
	now := payNow
	disp := &banking.WebhookDispatcher{Outbox: e.store, Sender: &WebhookSender{Targets: e.hooks, URLs: loopbackURLs}, ConfiguredOnly: true,
		Now: func() time.Time { return now }}
	if n, err := disp.RunOnce(context.Background()); err != nil || n != 0 {
		t.Fatalf("sent without a URL: %d %v", n, err)
	}
	st, m, raw := e.do("GET", webhookBase+"/deliveries", "p1", "")
	if ds, _ := m["deliveries"].([]any); st != 200 || len(ds) != 1 || ds[0].(map[string]any)["state"] != "PARKED" {
		t.Fatalf("parked: %d %s", st, raw)
	}
	if st, _, raw := e.do("PUT", webhookBase, "p1", `{"url":"`+sink.srv.URL+`","secret":"partner-one-secret-0001"}`); st != 200 {
		t.Fatal(raw)
	}
	now = now.Add(time.Second) // long before the park would end
	if n, err := disp.RunOnce(context.Background()); err != nil || n != 1 {
		t.Fatalf("after the setting: %d %v", n, err)
	}
	if _, ok, _ := sink.snapshot(); ok[id] != 1 {
		t.Fatalf("partner got %v", ok)
	}
}
