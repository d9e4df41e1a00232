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
			got, ok := q.next(ctx, now)
			if !ok || got.ID != id {
				t.Fatalf("next: %d %v, want %d", got.ID, ok, id)
			}
		}
	}
	take(1, 5, 8, 2, 6) // a, b, c, a, b: a and b at the cap, c done
	q.done(ev(1, "a"))
	take(3) // a's slot is free again
	if rest := q.pause("b"); len(rest) != 1 || rest[0].ID != 7 {
		t.Fatalf("paused b's rest %+v", rest)
	}
	q.done(ev(2, "a"))
	take(4)
	clock = clock.Add(webhookStartWindow + time.Second)
	q.done(ev(3, "a"))
	if got, ok := q.next(ctx, now); ok {
		t.Fatalf("started %d after the start window", got.ID)
	}
	if len(q.late) != 1 || q.late[0].ID != 9 {
		t.Fatalf("late %+v", q.late)
	}
}
