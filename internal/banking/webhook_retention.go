package banking

import (
	"context"
	"time"
)

// WebhookRetention deletes the outbox's finished events (delivered, or
// failed for good) once they have been finished for Keep, with their
// delivery log, so that the outbox and its log hold the events still
// under way and a window of recent ones for the partners' delivery log
// (reference §12 has a partner poll a payment's state when no webhook
// came, so an old event's log answers nothing it cannot read there).
type WebhookRetention struct {
	Outbox WebhookOutbox
	// Keep is how long a finished event stays; 0 or less keeps them all.
	Keep time.Duration
	Now  func() time.Time
}

// webhookPurgeBatch is how many finished events one purge transaction
// deletes at most: a few hundred small deletes hold SQLite's writer, or the
// rows' locks on PostgreSQL, for milliseconds, so deliveries and creates
// go on between batches.
const webhookPurgeBatch = 500

// webhookPurgeBatches is how many batches one Purge runs at most, so that
// a first purge of a long-kept outbox ends in seconds; the rest waits for
// the next run, which Purge's more tells its caller to make soon.
const webhookPurgeBatches = 100

// Purge deletes the events finished more than Keep ago, oldest finish
// first, batch after batch while the last was full, up to
// webhookPurgeBatches; it returns how many it deleted and whether it
// stopped at that bound with more to do. Each batch reads only events it
// deletes, so a run deletes every event old enough, up to that bound,
// however many that finished since have lower ids.
func (r *WebhookRetention) Purge(ctx context.Context) (deleted int64, more bool, err error) {
	if r.Keep <= 0 {
		return 0, false, nil
	}
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	before := now().Add(-r.Keep)
	for range webhookPurgeBatches {
		n, full, err := r.Outbox.PurgeWebhooks(ctx, before, webhookPurgeBatch)
		deleted += int64(n)
		if err != nil || !full || n == 0 {
			return deleted, false, err
		}
	}
	return deleted, true, nil
}
