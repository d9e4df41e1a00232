package upstream

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"partnerapi/internal/assistant"
)

// A pool sends each replica at most MaxInFlight requests (inference
// reference §9: a per-upstream concurrency limit); MaxQueue more wait for
// one of them to end, and a request beyond those is ErrEngineBusy at
// once, which the transports answer 429 with Retry-After (§10), instead of
// piling onto a server that would queue it out of sight.
func TestPoolConcurrencyLimit(t *testing.T) {
	a := newReplica(t, "a")
	hold := make(chan struct{})
	a.hold = hold
	p := testPool(t, PoolOptions{MaxInFlight: 2, MaxQueue: 1}, a)

	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for range 3 {
		wg.Go(func() {
			if _, err := hello(context.Background(), p, nil); err != nil {
				errs <- err
			}
		})
	}
	waitFor(t, "two held streams and one queued", func() bool { return a.holding.Load() == 2 && p.Queued() == 1 })

	// The replica holds its two streams until after the refusal, so a
	// request that queued for a place instead of failing at once would
	// never get one: it ends at its 30 s deadline with the context's
	// error, not ErrEngineBusy. How long the refusal took is not checked,
	// since a loaded machine stretches it.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	if _, err := hello(ctx, p, nil); !errors.Is(err, assistant.ErrEngineBusy) {
		t.Errorf("a request beyond the limit and the queue: %v, want ErrEngineBusy at once", err)
	}
	cancel()
	if n := a.chats.Load(); n != 2 {
		t.Errorf("the replica got %d chats while two were allowed", n)
	}
	if st := p.Stats()[0]; st.InFlight != 2 {
		t.Errorf("in flight %d, want 2", st.InFlight)
	}

	close(hold)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := a.chats.Load(); n != 3 {
		t.Errorf("the replica got %d chats, want the queued one too (3)", n)
	}
	if q := p.Queued(); q != 0 {
		t.Errorf("queued after the streams: %d", q)
	}
}

// A queued request whose client leaves stops waiting at once and frees its
// place in the queue.
func TestPoolQueuedRequestCancelled(t *testing.T) {
	a := newReplica(t, "a")
	hold := make(chan struct{})
	a.hold = hold
	defer close(hold)
	p := testPool(t, PoolOptions{MaxInFlight: 1, MaxQueue: 1}, a)
	go func() { _, _ = hello(context.Background(), p, nil) }()
	waitFor(t, "a held stream", func() bool { return a.holding.Load() == 1 })

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := hello(ctx, p, nil); done <- err }()
	waitFor(t, "a queued request", func() bool { return p.Queued() == 1 })
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled while queued: %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a cancelled request still waits")
	}
	if q := p.Queued(); q != 0 {
		t.Errorf("queued after the cancel: %d", q)
	}
}

// With two replicas of one slot each, two requests run at once, one on
// each, and the third waits for whichever ends first.
func TestPoolConcurrencyLimitPerReplica(t *testing.T) {
	a, b := newReplica(t, "a"), newReplica(t, "b")
	hold := make(chan struct{})
	a.hold, b.hold = hold, hold
	p := testPool(t, PoolOptions{MaxInFlight: 1}, a, b)
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			if _, err := hello(context.Background(), p, nil); err != nil {
				t.Error(err)
			}
		})
	}
	waitFor(t, "one held stream each and one queued", func() bool {
		return a.holding.Load() == 1 && b.holding.Load() == 1 && p.Queued() == 1
	})
	close(hold)
	wg.Wait()
	if n := a.chats.Load() + b.chats.Load(); n != 3 {
		t.Errorf("chats %d, want 3", n)
	}
}
