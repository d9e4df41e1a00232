package upstream

import (
	"context"
	"fmt"
	"slices"

	"partnerapi/internal/assistant"
)

// Every kind of upstream queues what it cannot run at once out of sight:
// llama-server behind its -np slots, Ollama behind OLLAMA_NUM_PARALLEL up to
// 512 requests, vLLM behind its batch. A client then waits with no answer
// and no way to tell a slow server from a full one (inference reference
// §10, "queueing opacity"). So a pool sends each replica at most
// MaxInFlight requests (reference §9: a per-upstream concurrency limit);
// up to MaxQueue more wait here, counted (Queued, exported as a metric),
// for a replica to have room, and a request beyond those is answered at
// once with ErrEngineBusy: 429 with Retry-After, as the embedded engine
// answers its own full queue.
//
// The queue is first in, first out. Waking every waiter when a place frees
// and letting them race for it would let a request that has waited long
// lose every race to newer ones, under steady load indefinitely; instead
// the place is handed, under the pool's lock, to the oldest waiter that
// can use it. "Can use it" matters because a waiter may be a failover,
// which must not return to the replica it tried: such a waiter does not
// hold back a newer one that can take the freed replica, since it would
// not take that replica itself. Every place that frees (a request ending,
// a replica back in rotation or found serving the model again) is handed
// at once, so a replica with room is one that no waiter can use, and a
// request arriving then takes it without passing anyone.

// DefaultMaxQueue is PoolOptions.MaxQueue's default, the embedded engine's
// own queue depth.
const DefaultMaxQueue = 64

// waiter is a request queued in acquire for a replica.
type waiter struct {
	tried []*replica
	// ready is closed once dispatch settled the waiter, having set r to
	// the replica it was handed (its place already counted in inFlight),
	// or left r nil when no replica can take the request any more.
	ready chan struct{}
	r     *replica
}

// Queued is the number of requests waiting for a replica under the
// pool's MaxInFlight.
func (p *Pool) Queued() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.waiters)
}

// acquire takes the healthy replica not in tried and not lacking the
// model with the fewest requests in flight. Where limited and every such
// replica has MaxInFlight requests, it queues for one to have room,
// unless MaxQueue requests already wait: then, or when ctx ends first, it
// is the error. A nil replica and error means no replica can take the
// request at all (none in rotation, or all tried).
func (p *Pool) acquire(ctx context.Context, tried []*replica, limited bool) (*replica, error) {
	p.mu.Lock()
	best, full := p.pick(tried, limited)
	if best != nil {
		p.take(best)
		best.requests++
		p.mu.Unlock()
		return best, nil
	}
	if !full {
		p.mu.Unlock()
		return nil, nil
	}
	if len(p.waiters) >= p.opts.MaxQueue {
		err := fmt.Errorf("upstream: %w: %d requests run on each replica of %s and %d wait", assistant.ErrEngineBusy, p.opts.MaxInFlight, p.name, len(p.waiters))
		p.mu.Unlock()
		return nil, err
	}
	w := &waiter{tried: tried, ready: make(chan struct{})}
	p.waiters = append(p.waiters, w)
	p.mu.Unlock()

	select {
	case <-w.ready:
	case <-ctx.Done():
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if i := slices.Index(p.waiters, w); i >= 0 {
		// Still queued, so ctx ended: it leaves the queue.
		p.waiters = slices.Delete(p.waiters, i, i+1)
		return nil, ctx.Err()
	}
	if ctx.Err() != nil {
		// Handed a place as its client left (select may pick either of
		// two ready cases): the place goes to the next waiter instead of
		// being lost, or spent on a request nobody waits for.
		if w.r != nil {
			w.r.inFlight--
			p.dispatch()
		}
		return nil, ctx.Err()
	}
	if w.r != nil {
		w.r.requests++
	}
	return w.r, nil
}

// take counts a request on r, with p.mu held, and moves the start of the
// next search on, so ties rotate.
func (p *Pool) take(r *replica) {
	p.next = (p.next + 1) % len(p.replicas)
	r.inFlight++
}

// pick is the replica acquire would take now, with p.mu held; when it is
// nil, full reports whether some replica could take the request but for
// MaxInFlight. The search starts at p.next, so ties rotate.
func (p *Pool) pick(tried []*replica, limited bool) (best *replica, full bool) {
	n := len(p.replicas)
	for i := range n {
		r := p.replicas[(p.next+i)%n]
		if !r.healthy || r.lacking || slices.Contains(tried, r) {
			continue
		}
		if limited && p.opts.MaxInFlight > 0 && r.inFlight >= p.opts.MaxInFlight {
			full = true
			continue
		}
		if best == nil || r.inFlight < best.inFlight {
			best = r
		}
	}
	return best, full && best == nil
}

// dispatch hands, with p.mu held, whatever room the replicas have to the
// queued requests, oldest first, and settles the waiters no replica can
// take any more (every one they have not tried left rotation), which then
// fail as they would have on arrival. It is called whenever a replica may
// have room: one ended a request or came back into rotation.
func (p *Pool) dispatch() {
	kept := p.waiters[:0]
	for _, w := range p.waiters {
		best, full := p.pick(w.tried, true)
		switch {
		case best != nil:
			p.take(best)
			w.r = best
			close(w.ready)
		case !full:
			close(w.ready)
		default:
			kept = append(kept, w)
		}
	}
	clear(p.waiters[len(kept):])
	p.waiters = kept
}

// replicaSlots lends a fan-out on one replica the places beyond its
// chat's own (fanout.go).
type replicaSlots struct {
	p *Pool
	r *replica
}

// more takes a place on r for one more choice of a fanned-out chat if r
// has room now. Places are handed to waiters as they free (dispatch), so
// room on a replica in rotation is room no queued request can use: taking
// it passes no one, and the fan-out never waits for it, since its chat
// already holds a place (fanout.go says why).
func (s replicaSlots) more() bool {
	p, r := s.p, s.r
	p.mu.Lock()
	defer p.mu.Unlock()
	if !r.healthy || r.lacking || (p.opts.MaxInFlight > 0 && r.inFlight >= p.opts.MaxInFlight) {
		return false
	}
	r.inFlight++
	return true
}

// less gives back a place more took, to the queue first.
func (s replicaSlots) less() {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	s.r.inFlight--
	s.p.dispatch()
}
