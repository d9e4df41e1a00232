package banking

import (
	"context"
	"time"
)

// releaseOnStop bounds the release of a stopping pass's unstarted events.
const releaseOnStop = 5 * time.Second

// stopped reports whether the process began to stop (a WebhookDispatcher's
// Stopping closed). From then on a pass hands out no more events: those of
// its batch not yet started are released at once for the other replicas
// on the database (or this one's next start), rather than sent one after
// another for the whole shutdown grace while the others idle, and the
// deliveries under way go on under the pass's context, so that an answer
// on its way is heard and recorded instead of cut off and sent again.
func stopped(stopping <-chan struct{}) bool {
	select {
	case <-stopping:
		return true
	default:
		return false
	}
}

// releaseUnstarted makes the events of q that no worker started due again
// at once, when a pass ends early (stopping, or ctx ended: cancelled at the
// end of the shutdown grace, or the pass ran out of time), rather than a
// minute later when their lease ends, so a rolling restart delays none of
// them. A store that does not take the release within releaseOnStop
// leaves them to the lease.
func (d *WebhookDispatcher) releaseUnstarted(ctx context.Context, q *batchQueue, now func() time.Time) error {
	left := q.unstarted()
	if len(left) == 0 {
		return nil
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseOnStop)
	defer cancel()
	return d.Outbox.ReleaseWebhooks(rctx, left, now())
}

// unstarted takes out the events no worker was handed, for release when a
// pass stops early.
func (q *batchQueue) unstarted() []WebhookEvent {
	q.mu.Lock()
	defer q.mu.Unlock()
	var evs []WebhookEvent
	for _, p := range q.partners {
		evs = append(evs, p.evs...)
		p.evs = nil
	}
	q.left = 0
	return evs
}
