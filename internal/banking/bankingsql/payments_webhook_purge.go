package bankingsql

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"partnerapi/internal/sqldb"
)

// finishedWebhooks is the condition of a finished outbox row, written as
// the predicate of the partial index banking_payment_webhooks_finished
// (migration 0016), which both planners match by its text.
const finishedWebhooks = `state IN ('DELIVERED', 'FAILED')`

// purgeCandidates reads the first limit finished events in id order, along
// banking_payment_webhooks_finished, with when each finished: its delivery,
// else its last delivery log entry (a failure, or the expiry that ended
// it), else when it was queued. The newest row of the outbox is never one
// of them (migration 0016 says why).
//
// SQLite, with no statistics, prefers banking_payment_webhooks_state_due
// for the state and then sorts every finished event by id to take the
// first few: it is told the index (INDEXED BY, which also fails the query
// should the index ever stop matching it). PostgreSQL walks the partial
// index by itself (TestWebhookPurgePlan).
func purgeCandidates(d sqldb.Dialect) string {
	from := `banking_payment_webhooks w`
	if d == sqldb.SQLite {
		from += ` INDEXED BY banking_payment_webhooks_finished`
	}
	return `SELECT w.id, COALESCE(w.delivered_at,
		(SELECT MAX(l.at) FROM banking_payment_webhook_log l WHERE l.webhook_id = w.id),
		w.created_at, w.event_time)
	FROM ` + from + `
	WHERE w.` + finishedWebhooks + ` AND w.id < (SELECT MAX(m.id) FROM banking_payment_webhooks m)
	ORDER BY w.id LIMIT $1`
}

// PurgeWebhooks deletes, in one transaction, those of the first limit
// finished events (DELIVERED or FAILED, in id order) that finished before
// finishedBefore, with their delivery log rows. An event still pending,
// parked or under a claim is never read, and the delete checks each
// event is still finished. The newest row of the outbox stays, so that
// SQLite's rowid never hands a deleted event's id to a new one (migration
// 0016): an attempt recorded late for a deleted event then lands on no
// other event's log. more reports that the window was full, so finished
// events may lie behind it.
//
// A pass reads at most limit events, whatever the size of the outbox: an
// event that finished late (retried for hours) at the head of the window
// holds back the ones behind it only while the window holds nothing old
// enough, at most until it ages itself.
func (s *PaymentStore) PurgeWebhooks(ctx context.Context, finishedBefore time.Time, limit int) (deleted int, more bool, err error) {
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		deleted, more = 0, false
		rows, err := tx.QueryContext(ctx, purgeCandidates(s.db.Dialect), limit)
		if err != nil {
			return err
		}
		var ids []any
		seen := 0
		for rows.Next() {
			var id, finished int64
			if err := rows.Scan(&id, &finished); err != nil {
				rows.Close()
				return err
			}
			seen++
			if finished < micros(finishedBefore) {
				ids = append(ids, id)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		more = seen == limit
		if len(ids) == 0 {
			return nil
		}
		marks := make([]string, len(ids))
		for i := range ids {
			marks[i] = fmt.Sprintf("$%d", i+1)
		}
		in := strings.Join(marks, ",")
		res, err := tx.ExecContext(ctx, `DELETE FROM banking_payment_webhooks WHERE id IN (`+in+`) AND `+finishedWebhooks, ids...)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		deleted = int(n)
		// The log of an event the delete left (it is no longer finished)
		// stays with it.
		_, err = tx.ExecContext(ctx, `DELETE FROM banking_payment_webhook_log WHERE webhook_id IN (`+in+`)
			AND NOT EXISTS (SELECT 1 FROM banking_payment_webhooks w WHERE w.id = banking_payment_webhook_log.webhook_id)`, ids...)
		return err
	})
	if err != nil {
		return 0, false, fmt.Errorf("purge webhooks: %w", err)
	}
	return deleted, more, nil
}
