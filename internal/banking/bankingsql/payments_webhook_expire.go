package bankingsql

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"
)

// ExpireParkedWebhooks fails for good up to limit events parked for want of
// a URL (state PARKED: their partner has no webhook and the deployment no
// default) that were queued before queuedBefore and are due for their next
// look at now, each with an entry of no HTTP status in its delivery log,
// reason its error, spending no attempt. No claim hands such an event out,
// so without this it would stay in the outbox for good.
//
// It reads along banking_payment_webhooks_state_due (state, next_at), as a
// claim does: the first limit of the parked events whose park is over, the
// ones the claims look at next, and fails those old enough. So a pass reads
// at most limit rows, however many young events' parks end together (the
// claims park those again, and the ones behind them come up); an event is
// failed within a park (an hour) of the limit, later only behind such a
// backlog. The rows
// are updated in id order, the order a claim and a partner's new setting
// lock them in, and each only while it is still parked and due: one a new
// setting has woken meanwhile is left to its claim, which fails it by the
// same limit.
func (s *PaymentStore) ExpireParkedWebhooks(ctx context.Context, now, queuedBefore time.Time, reason string, limit int) (int, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT id, COALESCE(created_at, event_time) FROM banking_payment_webhooks
		WHERE state = 'PARKED' AND next_at <= $1 ORDER BY next_at LIMIT $2`, micros(now), limit)
	if err != nil {
		return 0, fmt.Errorf("expire parked webhooks: %w", err)
	}
	var ids []int64
	for rows.Next() {
		var id, queued int64
		if err := rows.Scan(&id, &queued); err != nil {
			rows.Close()
			return 0, err
		}
		if queued < micros(queuedBefore) {
			ids = append(ids, id)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("expire parked webhooks: %w", err)
	}
	if len(ids) == 0 {
		return 0, nil
	}
	slices.Sort(ids)
	n := 0
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		n = 0
		for _, id := range ids {
			res, err := tx.ExecContext(ctx, `UPDATE banking_payment_webhooks SET state = 'FAILED', next_at = 0, last_error = $1, finished_at = $3
				WHERE id = $2 AND state = 'PARKED' AND next_at <= $3`, reason, id, micros(now))
			if err != nil {
				return err
			}
			if k, _ := res.RowsAffected(); k != 1 {
				continue
			}
			// The entry carries the number of the event's last try, as
			// the dispatcher's expiry of a claimed event does.
			if _, err := tx.ExecContext(ctx, `INSERT INTO banking_payment_webhook_log (webhook_id, attempt, at, http_status, error, format)
				SELECT id, attempts, $1, 0, $2, '' FROM banking_payment_webhooks WHERE id = $3`, micros(now), reason, id); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("expire parked webhooks: %w", err)
	}
	return n, nil
}
