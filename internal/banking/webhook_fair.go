package banking

import (
	"context"
	"sync"
	"time"
)

// webhookPerEndpoint is how many deliveries to one receiver (an event's
// Endpoint: a partner's own webhook, or the deployment default that every
// partner without one shares) are under way at once. A receiver that hangs
// until the sender's timeout then holds two of the workers, not all of
// them, while the others serve the rest of the batch; and a receiver is
// sent no more at once for having more partners: capped per partner, the
// default's receiver took two deliveries at once from each of its
// partners, up to all eight workers.
const webhookPerEndpoint = 2

// The pause of a partner after a delivery that got no answer or a 429/503:
// webhookPauseBase after the first in a row, doubling per further one up
// to webhookPauseMax, so a receiver that is down for hours is tried a few
// times an hour rather than at every tick, and one that was down for a
// moment is back within seconds.
const (
	webhookPauseBase = 5 * time.Second
	webhookPauseMax  = 5 * time.Minute
)

// webhookStartWindow is how long after its claim a batch may start
// deliveries. The store leases the claimed events for a minute, after
// which another dispatcher may claim and send them again, and a delivery
// takes up to the sender's timeout (10 s): a delivery started within the
// window ends within the lease. With the per-partner cap a batch of one
// partner's events to a slow receiver could otherwise run past it; what
// the window leaves unsent is released, due again at once.
const webhookStartWindow = 40 * time.Second

// pausesPartner reports whether an attempt's outcome says the partner's
// receiver will not take its other events either: no answer at all (a
// transport error or the sender's timeout), or 429/503, the receiver's own
// word that it is overloaded or down.
func pausesPartner(status int) bool {
	return status == 0 || status == 429 || status == 503
}

// batchQueue hands a claimed batch's events to the workers round-robin
// across partners, in the order each partner's events fell due, with at
// most perEndpoint under way at once to one receiver (endpointOf), however
// many partners send to it. Events bound for a receiver paused during the
// batch, and every event once the start window is over, are taken out
// unsent for release.
type batchQueue struct {
	mu          sync.Mutex
	cond        *sync.Cond
	partners    []*partnerQueue // in the order of each partner's first event
	turn        int             // where the round-robin looks first
	left        int             // events neither handed out nor taken out
	perEndpoint int
	// running counts the deliveries under way to each endpoint.
	running map[string]int
	startBy time.Time
	late    []WebhookEvent // taken out when the start window ended
	// onTrial counts the deliveries under way to each endpoint whose
	// events came as probes (WebhookEvent.Probe) and that has not answered
	// in this batch yet: one at a time, so a receiver still down is tried
	// once per pause, not once per partner that sends to it.
	onTrial  map[string]int
	answered map[string]bool // probed endpoints that answered in this batch
}

type partnerQueue struct {
	evs []WebhookEvent // not yet handed out, oldest due first
}

func newBatchQueue(evs []WebhookEvent, perEndpoint int, startBy time.Time) *batchQueue {
	q := &batchQueue{left: len(evs), perEndpoint: perEndpoint, running: map[string]int{}, startBy: startBy,
		onTrial: map[string]int{}, answered: map[string]bool{}}
	q.cond = sync.NewCond(&q.mu)
	byClient := map[string]*partnerQueue{}
	for _, ev := range evs {
		p := byClient[ev.ClientID]
		if p == nil {
			p = &partnerQueue{}
			byClient[ev.ClientID] = p
			q.partners = append(q.partners, p)
		}
		p.evs = append(p.evs, ev)
	}
	return q
}

// next is the event a worker delivers next; false when there is none to
// start: the batch is done, ctx ended or stopping is closed (what is left
// is released by the pass, unstarted), or the start window is over (what is left is in late). It
// waits while the endpoint of every partner with events left has
// perEndpoint under way.
func (q *batchQueue) next(ctx context.Context, stopping <-chan struct{}, now func() time.Time) (WebhookEvent, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		if q.left == 0 || ctx.Err() != nil || stopped(stopping) {
			return WebhookEvent{}, false
		}
		if now().After(q.startBy) {
			for _, p := range q.partners {
				q.late = append(q.late, p.evs...)
				p.evs = nil
			}
			q.left = 0
			q.cond.Broadcast()
			return WebhookEvent{}, false
		}
		for i := range q.partners {
			k := (q.turn + i) % len(q.partners)
			p := q.partners[k]
			if len(p.evs) == 0 || q.running[endpointOf(p.evs[0])] >= q.perEndpoint || q.waitsForProbe(p.evs[0]) {
				continue
			}
			ev := p.evs[0]
			p.evs = p.evs[1:]
			q.running[endpointOf(ev)]++
			if ev.Probe {
				q.onTrial[endpointOf(ev)]++
			}
			q.left--
			q.turn = k + 1
			return ev, true
		}
		q.cond.Wait()
	}
}

// waitsForProbe reports whether ev is a probe of an endpoint that has one
// under way and has not answered yet.
func (q *batchQueue) waitsForProbe(ev WebhookEvent) bool {
	e := endpointOf(ev)
	return ev.Probe && q.onTrial[e] > 0 && !q.answered[e]
}

// done ends a delivery handed out by next, freeing its endpoint's slot;
// answered says its receiver answered (anything but no answer or a
// 429/503), which ends the one-at-a-time of a probed endpoint.
func (q *batchQueue) done(ev WebhookEvent, answered bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.running[endpointOf(ev)]--
	if ev.Probe {
		q.onTrial[endpointOf(ev)]--
	}
	if answered {
		q.answered[endpointOf(ev)] = true
	}
	q.cond.Broadcast()
}

// pause takes the events bound for endpoint not yet handed out out of the
// batch, whichever partner's, and returns them, so that no worker starts
// one while the pause is recorded. A partner's own endpoint is keyed by its
// ClientID, so its events claimed as the default's before it set a webhook
// (which go to its own now) are taken out with it.
func (q *batchQueue) pause(endpoint string) []WebhookEvent {
	q.mu.Lock()
	defer q.mu.Unlock()
	var rest []WebhookEvent
	for _, p := range q.partners {
		kept := p.evs[:0]
		for _, ev := range p.evs {
			if endpointOf(ev) == endpoint || ev.ClientID == endpoint {
				rest = append(rest, ev)
			} else {
				kept = append(kept, ev)
			}
		}
		p.evs = kept
	}
	q.left -= len(rest)
	q.cond.Broadcast()
	return rest
}
