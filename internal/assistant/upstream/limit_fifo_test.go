package upstream

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"partnerapi/internal/assistant"
)

// These tests drive a pool's queue directly (acquire, release): the queue
// sends nothing to the replicas, so its order is the test's own, not the
// scheduler's or the network's.

// acquired is what one queued acquire returned.
type acquired struct {
	who int
	r   *replica
	err error
}

// queuePool is a pool of replicas that are never asked anything, each
// allowed one request at a time, whose queue holds max requests.
func queuePool(t *testing.T, replicas, max int) *Pool {
	bases := make([]string, replicas)
	for i := range bases {
		bases[i] = "http://127.0.0.1:1/" + string(rune('a'+i))
	}
	p := NewPool("m", Served{}, bases, PoolOptions{MaxInFlight: 1, MaxQueue: max})
	t.Cleanup(p.Close)
	return p
}

// enqueue starts an acquire as request who and returns once it waits in
// the queue, so requests started one after the other queue in that order.
func enqueue(t *testing.T, p *Pool, ctx context.Context, who int, tried []*replica, out chan<- acquired) {
	t.Helper()
	before := p.Queued()
	go func() {
		r, err := p.acquire(ctx, tried, true)
		out <- acquired{who, r, err}
	}()
	waitFor(t, "a queued request", func() bool { return p.Queued() == before+1 })
}

// next is the next acquire to return, failing the test after five seconds.
func next(t *testing.T, out <-chan acquired) acquired {
	t.Helper()
	select {
	case a := <-out:
		return a
	case <-time.After(5 * time.Second):
		t.Fatal("no queued request returned")
		return acquired{}
	}
}

// Requests queued in a known order get the replica in that order as its
// one place frees, one at a time; those whose client left meanwhile leave
// the queue at once (the depth shows it) and are skipped, and a request
// beyond the full queue is refused at once.
func TestPoolQueueFIFO(t *testing.T) {
	const n = 8
	for _, tc := range []struct {
		name      string
		cancelled []int
	}{
		{"none cancelled", nil},
		{"one in the middle cancelled", []int{3}},
		{"first and last cancelled", []int{0, n - 1}},
		{"most cancelled", []int{0, 1, 2, 4, 5, 6}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := queuePool(t, 1, n)
			held, err := p.acquire(context.Background(), nil, true)
			if err != nil || held == nil {
				t.Fatalf("first acquire: %v, %v", held, err)
			}
			out := make(chan acquired, n)
			cancels := make([]context.CancelFunc, n)
			for i := range n {
				ctx, cancel := context.WithCancel(context.Background())
				t.Cleanup(cancel)
				cancels[i] = cancel
				enqueue(t, p, ctx, i, nil, out)
			}
			if _, err := p.acquire(context.Background(), nil, true); !errors.Is(err, assistant.ErrEngineBusy) {
				t.Fatalf("a request beyond the full queue: %v, want ErrEngineBusy", err)
			}

			for k, i := range tc.cancelled {
				cancels[i]()
				a := next(t, out)
				if a.who != i || !errors.Is(a.err, context.Canceled) || a.r != nil {
					t.Fatalf("after cancelling %d: request %d returned %v, %v", i, a.who, a.r, a.err)
				}
				if q := p.Queued(); q != n-k-1 {
					t.Fatalf("queue depth %d after %d cancellations, want %d", q, k+1, n-k-1)
				}
			}

			var order []int
			for range n - len(tc.cancelled) {
				p.release(held, nil)
				a := next(t, out)
				if a.err != nil || a.r == nil {
					t.Fatalf("request %d: %v, %v", a.who, a.r, a.err)
				}
				order = append(order, a.who)
				held = a.r
			}
			var want []int
			for i := range n {
				if !slices.Contains(tc.cancelled, i) {
					want = append(want, i)
				}
			}
			if !slices.Equal(order, want) {
				t.Errorf("acquired in the order %v, want %v", order, want)
			}
			p.release(held, nil)
			if q, in := p.Queued(), p.Stats()[0].InFlight; q != 0 || in != 0 {
				t.Errorf("after every request: %d queued, %d in flight", q, in)
			}
			if got := p.Stats()[0].Requests; got != int64(len(want)+1) {
				t.Errorf("requests counted %d, want %d", got, len(want)+1)
			}
		})
	}
}

// A failover waits for a replica other than the one it tried: when that
// one frees, the newer request that can take it gets it instead of
// waiting behind the failover, which gets the next place it can use.
func TestPoolQueueSkipsWaiterThatCannotUseReplica(t *testing.T) {
	p := queuePool(t, 2, 4)
	a, _ := p.acquire(context.Background(), nil, true)
	b, _ := p.acquire(context.Background(), nil, true)
	if a == nil || b == nil || a == b {
		t.Fatalf("two replicas of one place: %v, %v", a, b)
	}
	out := make(chan acquired, 2)
	enqueue(t, p, context.Background(), 0, []*replica{a}, out)
	enqueue(t, p, context.Background(), 1, nil, out)

	p.release(a, nil)
	if got := next(t, out); got.who != 1 || got.r != a {
		t.Fatalf("replica a went to request %d (%v), want the newer request 1", got.who, got.err)
	}
	if q := p.Queued(); q != 1 {
		t.Fatalf("queue depth %d, want the failover still waiting", q)
	}
	p.release(b, nil)
	if got := next(t, out); got.who != 0 || got.r != b {
		t.Fatalf("replica b went to request %d (%v), want the failover", got.who, got.err)
	}
}

// A place handed to a waiter whose client left at that moment goes on to
// the next waiter. The test holds the pool's lock while it cancels the
// first waiter and frees the place, so the place is handed to it however
// the goroutines are scheduled, and the waiter finds both its client gone
// and a place handed to it.
func TestPoolHandOffToCancelledWaiter(t *testing.T) {
	p := queuePool(t, 1, 2)
	held, _ := p.acquire(context.Background(), nil, true)
	out := make(chan acquired, 2)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	enqueue(t, p, ctx, 0, nil, out)
	enqueue(t, p, context.Background(), 1, nil, out)

	p.mu.Lock()
	cancel()
	held.inFlight--
	p.dispatch()
	handed := len(p.waiters) == 1
	p.mu.Unlock()
	if !handed {
		t.Fatal("the freed place was not handed to the first waiter")
	}

	got := []acquired{next(t, out), next(t, out)}
	slices.SortFunc(got, func(x, y acquired) int { return x.who - y.who })
	if !errors.Is(got[0].err, context.Canceled) || got[0].r != nil {
		t.Errorf("the cancelled waiter: %v, %v; want context.Canceled and no replica", got[0].r, got[0].err)
	}
	if got[1].err != nil || got[1].r != held {
		t.Errorf("the next waiter: %v, %v; want the place passed on", got[1].r, got[1].err)
	}
	if in := p.Stats()[0].InFlight; in != 1 {
		t.Errorf("in flight %d, want the one place the next waiter holds", in)
	}
	p.release(got[1].r, nil)
	if q, in := p.Queued(), p.Stats()[0].InFlight; q != 0 || in != 0 {
		t.Errorf("at the end: %d queued, %d in flight", q, in)
	}
}

// A client leaving while its place is handed over, in whatever order the
// two happen (run with -race -count=50): the waiter either takes the place
// or gives it on, so the next waiter gets it either way and no place is
// lost or counted twice.
func TestPoolQueueCancelRacesHandOff(t *testing.T) {
	p := queuePool(t, 1, 2)
	for range 20 {
		held, _ := p.acquire(context.Background(), nil, true)
		out := make(chan acquired, 2)
		ctx, cancel := context.WithCancel(context.Background())
		enqueue(t, p, ctx, 0, nil, out)
		enqueue(t, p, context.Background(), 1, nil, out)

		go cancel()
		p.release(held, nil)
		// Request 0 either takes the place, and request 1 gets it once 0
		// ends, or leaves (before or after the place was handed to it),
		// and request 1 gets it at once; the two may then return in
		// either order.
		var zero, one acquired
		for range 2 {
			switch a := next(t, out); a.who {
			case 0:
				zero = a
				if a.err == nil && a.r != nil {
					p.release(a.r, nil)
				} else if !errors.Is(a.err, context.Canceled) || a.r != nil {
					t.Fatalf("request 0: %v, %v", a.r, a.err)
				}
			default:
				one = a
				// Request 1 holds the one place, and request 0 no
				// longer does: a place lost, or counted twice, shows.
				if in := p.Stats()[0].InFlight; a.r != nil && in != 1 {
					t.Fatalf("in flight %d while request 1 holds the place", in)
				}
			}
		}
		if zero.err == nil && zero.r == nil {
			t.Fatal("request 0 did not return")
		}
		if one.err != nil || one.r == nil {
			t.Fatalf("request 1: %v, %v", one.r, one.err)
		}
		p.release(one.r, nil)
		if q, in := p.Queued(), p.Stats()[0].InFlight; q != 0 || in != 0 {
			t.Fatalf("after both: %d queued, %d in flight", q, in)
		}
	}
}
