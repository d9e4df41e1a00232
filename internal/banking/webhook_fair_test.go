package banking

import (
	"context"
	"testing"
	"time"
)

// A batch is handed out round-robin across partners, in the order their
// events fell due, never more than the cap of one partner at once; a
// paused partner's rest is taken out, and the end of the start window
// takes out everything left.
func TestBatchQueueRoundRobin(t *testing.T) {
	ev := func(id int64, client string) WebhookEvent { return WebhookEvent{ID: id, ClientID: client} }
	batch := []WebhookEvent{ev(1, "a"), ev(2, "a"), ev(3, "a"), ev(4, "a"), ev(5, "b"), ev(6, "b"), ev(7, "b"), ev(8, "c"), ev(9, "a")}
	at := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	clock := at
	now := func() time.Time { return clock }
	ctx := context.Background()
	q := newBatchQueue(batch, 2, at.Add(webhookStartWindow))
	take := func(want ...int64) {
		t.Helper()
		for _, id := range want {
			got, ok := q.next(ctx, nil, now)
			if !ok || got.ID != id {
				t.Fatalf("next: %d %v, want %d", got.ID, ok, id)
			}
		}
	}
	take(1, 5, 8, 2, 6) // a, b, c, a, b: a and b at the cap, c done
	q.done(ev(1, "a"), true)
	take(3) // a's slot is free again
	if rest := q.pause("b"); len(rest) != 1 || rest[0].ID != 7 {
		t.Fatalf("paused b's rest %+v", rest)
	}
	q.done(ev(2, "a"), true)
	take(4)
	clock = clock.Add(webhookStartWindow + time.Second)
	q.done(ev(3, "a"), true)
	if got, ok := q.next(ctx, nil, now); ok {
		t.Fatalf("started %d after the start window", got.ID)
	}
	if len(q.late) != 1 || q.late[0].ID != 9 {
		t.Fatalf("late %+v", q.late)
	}
}

// The events of an endpoint that failed last come as probes: one of them
// is under way at a time, whoever's, until the endpoint answers; then
// the rest go as any others. Other endpoints' events are not held back.
// Before, every partner of the default sent its own probe at once (two
// each, up to the eight workers), all to a receiver found down.
func TestBatchQueueOneProbeAtATime(t *testing.T) {
	probe := func(id int64, client string) WebhookEvent {
		return WebhookEvent{ID: id, ClientID: client, Endpoint: DefaultWebhookEndpoint, Probe: true}
	}
	at := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	now := func() time.Time { return at }
	ctx := context.Background()
	for _, answered := range []bool{true, false} {
		q := newBatchQueue([]WebhookEvent{probe(1, "a"), probe(2, "b"), probe(3, "a"), {ID: 4, ClientID: "c"}}, 2, at.Add(webhookStartWindow))
		for _, want := range []int64{1, 4} {
			if got, ok := q.next(ctx, nil, now); !ok || got.ID != want {
				t.Fatalf("next: %d %v, want %d", got.ID, ok, want)
			}
		}
		got := make(chan int64, 1)
		go func() {
			ev, _ := q.next(ctx, nil, now)
			got <- ev.ID
		}()
		select {
		case id := <-got:
			t.Fatalf("event %d started beside the endpoint's probe", id)
		case <-time.After(50 * time.Millisecond):
		}
		if !answered {
			// The probe found the endpoint down: its pause takes the rest.
			if rest := q.pause(DefaultWebhookEndpoint); len(rest) != 2 {
				t.Fatalf("the pause took %+v", rest)
			}
			q.done(probe(1, "a"), false)
			q.done(WebhookEvent{ID: 4, ClientID: "c"}, true)
			if id := <-got; id != 0 {
				t.Fatalf("event %d started after the endpoint's pause", id)
			}
			continue
		}
		// Answered: the waiting worker starts one of the rest, and the
		// other starts beside it.
		q.done(probe(1, "a"), true)
		first := <-got
		ev, ok := q.next(ctx, nil, now)
		if !ok || first+ev.ID != 5 || first == ev.ID {
			t.Fatalf("after the probe's answer %d and %d %v started, want 2 and 3 together", first, ev.ID, ok)
		}
	}
}
