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

// DefaultMaxQueue is PoolOptions.MaxQueue's default, the embedded engine's
// own queue depth.
const DefaultMaxQueue = 64

// Queued is the number of requests waiting for a replica under the
// pool's MaxInFlight.
func (p *Pool) Queued() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.queued
}

// acquire takes the healthy replica not in tried and not lacking the
// model with the fewest requests in flight. Where limited and every such
// replica has MaxInFlight requests, it waits for one to have room,
// unless MaxQueue requests already wait: then, or when ctx ends first, it
// is the error. A nil replica and error means no replica can take the
// request at all (none in rotation, or all tried).
func (p *Pool) acquire(ctx context.Context, tried []*replica, limited bool) (*replica, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	queued := false
	defer func() {
		if queued {
			p.queued--
		}
	}()
	for {
		best, full := p.pick(tried, limited)
		if best != nil {
			p.next = (p.next + 1) % len(p.replicas)
			best.inFlight++
			best.requests++
			return best, nil
		}
		if !full {
			return nil, nil
		}
		if !queued {
			if p.queued >= p.opts.MaxQueue {
				return nil, fmt.Errorf("upstream: %w: %d requests run on each replica of %s and %d wait", assistant.ErrEngineBusy, p.opts.MaxInFlight, p.name, p.queued)
			}
			queued = true
			p.queued++
		}
		freed := p.freed
		p.mu.Unlock()
		select {
		case <-freed:
			p.mu.Lock()
		case <-ctx.Done():
			p.mu.Lock()
			return nil, ctx.Err()
		}
	}
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

// wake tells the requests waiting in acquire, with p.mu held, that a
// replica may have room: one ended a request or came back into rotation.
func (p *Pool) wake() {
	close(p.freed)
	p.freed = make(chan struct{})
}
