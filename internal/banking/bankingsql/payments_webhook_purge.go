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
// the predicate of the partial index banking_payment_webhooks_finished_at
// (migration 0017), which both planners match by its text.
const finishedWebhooks = `state IN ('DELIVERED', 'FAILED')`

// finishedIndex names banking_payment_webhooks_finished_at to SQLite, which,
// with no statistics, prefers banking_payment_webhooks_state_due for the
// state and then reads every finished event; INDEXED BY also fails the
// query should the index ever stop matching it. PostgreSQL walks the
// partial index by itself (TestWebhookPurgePlan).
func finishedIndex(d sqldb.Dialect) string {
	if d == sqldb.SQLite {
		return ` INDEXED BY banking_payment_webhooks_finished_at`
	}
	return ""
}

// purgeCandidates reads up to $2 finished events that finished before $1,
// oldest finish first, along banking_payment_webhooks_finished_at: the
// read stops at the first event finished since, so an event that finished
// late (retried for hours, or parked) holds back none finished before it,
// and a pass reads only rows it deletes. The newest row of the outbox is
// never one of them (migration 0016 says why).
func purgeCandidates(d sqldb.Dialect) string {
	return `SELECT w.id FROM banking_payment_webhooks w` + finishedIndex(d) + `
	WHERE w.` + finishedWebhooks + ` AND w.finished_at < $1 AND w.id < (SELECT MAX(m.id) FROM banking_payment_webhooks m)
	ORDER BY w.finished_at, w.id LIMIT $2`
}

// unstamped reads up to $1 finished rows without finished_at, along
// banking_payment_webhooks_finished_at. Only a process of an older build
// still running beside a migrated one finishes rows without it;
// unstamped, the purge would never reach them (stampFinished).
func unstamped(d sqldb.Dialect) string {
	return `SELECT w.id FROM banking_payment_webhooks w` + finishedIndex(d) + `
	WHERE w.` + finishedWebhooks + ` AND w.finished_at IS NULL LIMIT $1`
}

// stampFinished gives the finished rows of ids without finished_at the time
// they finished, as migration 0017 gave those finished before it: their
// delivery, else their last delivery log entry (a failure, or the expiry
// that ended them), else when they were queued. The condition is checked
// again on each row, so one made pending meanwhile is left alone.
func stampFinished(ctx context.Context, tx *sql.Tx, d sqldb.Dialect, limit int) (int, error) {
	rows, err := tx.QueryContext(ctx, unstamped(d), limit)
	if err != nil {
		return 0, err
	}
	var ids []any
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(ids) == 0 {
		return 0, err
	}
	_, err = tx.ExecContext(ctx, `UPDATE banking_payment_webhooks SET finished_at = COALESCE(delivered_at,
		(SELECT MAX(l.at) FROM banking_payment_webhook_log l WHERE l.webhook_id = banking_payment_webhooks.id),
		created_at, event_time)
	WHERE id IN (`+idMarks(1, len(ids))+`) AND `+finishedWebhooks+` AND finished_at IS NULL`, ids...)
	return len(ids), err
}

// PurgeWebhooks deletes, in one transaction, up to limit finished events
// (DELIVERED or FAILED) that finished before finishedBefore, oldest finish
// first, with their delivery log rows. An event still pending, parked or
// under a claim is never read, and the delete checks again that each
// event is finished, and finished before finishedBefore. The newest row of
// the outbox stays, so that SQLite's rowid never hands a deleted event's
// id to a new one (migration 0016): an attempt recorded late for a
// deleted event then finds no event, and is not recorded
// (RecordWebhookAttempt). more reports that limit events were found (or
// limit rows stamped), so more may be due.
//
// A pass reads at most limit events (and limit unstamped rows), whatever
// the size of the outbox, and every event it reads is one to delete: the
// events finished since the cutoff lie after them along the index.
func (s *PaymentStore) PurgeWebhooks(ctx context.Context, finishedBefore time.Time, limit int) (deleted int, more bool, err error) {
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		deleted, more = 0, false
		stamped, err := stampFinished(ctx, tx, s.db.Dialect, limit)
		if err != nil {
			return err
		}
		more = stamped == limit
		cutoff := micros(finishedBefore)
		rows, err := tx.QueryContext(ctx, purgeCandidates(s.db.Dialect), cutoff, limit)
		if err != nil {
			return err
		}
		ids := []any{cutoff}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(ids)-1 == limit {
			more = true
		}
		if len(ids) == 1 {
			return nil
		}
		// $1 is the cutoff in the outbox's delete, and the ids follow;
		// the log's delete takes the ids alone.
		in := idMarks(2, len(ids)-1)
		// The outbox row goes before its log, in the order
		// RecordWebhookAttempt locks them: an attempt recorded meanwhile
		// either waits for the delete and then finds no event, or makes
		// its event pending or finished since the cutoff first, and the
		// delete leaves it.
		res, err := tx.ExecContext(ctx, `DELETE FROM banking_payment_webhooks WHERE id IN (`+in+`) AND `+finishedWebhooks+` AND finished_at < $1`, ids...)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		deleted = int(n)
		// The log of an event the delete left stays with it.
		_, err = tx.ExecContext(ctx, `DELETE FROM banking_payment_webhook_log WHERE webhook_id IN (`+idMarks(1, len(ids)-1)+`)
			AND NOT EXISTS (SELECT 1 FROM banking_payment_webhooks w WHERE w.id = banking_payment_webhook_log.webhook_id)`, ids[1:]...)
		return err
	})
	if err != nil {
		return 0, false, fmt.Errorf("purge webhooks: %w", err)
	}
	return deleted, more, nil
}

// idMarks is n placeholders from $first on, comma-separated.
func idMarks(first, n int) string {
	marks := make([]string, n)
	for i := range marks {
		marks[i] = fmt.Sprintf("$%d", first+i)
	}
	return strings.Join(marks, ",")
}
