package bankingsql

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
)

// PauseWebhookPartner pauses the webhooks to endpoint after a delivery
// that got no answer or a 429/503 (banking.WebhookDispatcher): a partner's
// own webhook, keyed by its client ID, or the deployment default
// (banking.DefaultWebhookEndpoint), which the partners without one share,
// keyed as one. The pause row is durable, so every dispatcher on the
// database, and this one after a restart, honours it; and the pending
// events bound for the endpoint due before its end are moved to the end at
// once, without an attempt, so that a claim's scan along (state, next_at)
// does not walk past a dead receiver's backlog on every tick, and the
// events do not spend their attempts on a receiver that is down.
func (s *PaymentStore) PauseWebhookPartner(ctx context.Context, endpoint string, now time.Time, base, max time.Duration) (time.Time, bool, error) {
	var until time.Time
	var opened bool
	clientID := endpoint
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		// The row exists before it is read, so that on PostgreSQL the read
		// locks it: two dispatchers failing on one partner at once then
		// escalate one after the other instead of both from the same count.
		// It is locked before any outbox row, as RecordWebhookAttempt's
		// reset does, so the two never wait on each other in a cycle.
		if _, err := tx.ExecContext(ctx, `INSERT INTO banking_webhook_pauses (client_id, failures, paused_until) VALUES ($1, 0, 0)
			ON CONFLICT (client_id) DO NOTHING`, clientID); err != nil {
			return fmt.Errorf("webhook pause: %w", err)
		}
		lock := ""
		if s.db.Dialect == sqldb.Postgres {
			lock = " FOR UPDATE"
		}
		var failures int
		var end int64
		if err := tx.QueryRowContext(ctx, `SELECT failures, paused_until FROM banking_webhook_pauses WHERE client_id = $1`+lock, clientID).
			Scan(&failures, &end); err != nil {
			return fmt.Errorf("webhook pause: %w", err)
		}
		if end > micros(now) {
			// Paused already: this failure is of a delivery under way when
			// the pause began (another worker's, or another process's), the
			// same outage rather than one more that outlasted a pause.
			until = time.UnixMicro(end).UTC()
		} else {
			if now.Sub(time.UnixMicro(end)) > max {
				// The last pause ended long before this failure, with no
				// failure at its end: this is a new outage, not the same
				// one outlasting a pause, and starts at base again.
				failures = 0
			}
			failures++
			opened = failures == 1
			until = now.Add(webhookPauseFor(failures, base, max))
			if _, err := tx.ExecContext(ctx, `UPDATE banking_webhook_pauses SET failures = $1, paused_until = $2 WHERE client_id = $3`,
				failures, micros(until), clientID); err != nil {
				return fmt.Errorf("webhook pause: %w", err)
			}
		}
		// On PostgreSQL the rows are locked in id order, the order a claim
		// locks them in (DueWebhooks): a plain UPDATE locks them in scan
		// order and can deadlock with a claim holding some of them.
		move := `UPDATE banking_payment_webhooks SET next_at = $1
			WHERE client_id = $2 AND state = 'PENDING' AND next_at < $1`
		if s.db.Dialect == sqldb.Postgres {
			move = `UPDATE banking_payment_webhooks SET next_at = $1
			WHERE id IN (SELECT id FROM banking_payment_webhooks WHERE client_id = $2 AND state = 'PENDING' AND next_at < $1 ORDER BY id FOR UPDATE)`
		}
		if endpoint == banking.DefaultWebhookEndpoint {
			// The default's events are those of every partner without a
			// webhook of its own ($2, the endpoint's key, is no client's).
			move = `UPDATE banking_payment_webhooks SET next_at = $1
			WHERE state = 'PENDING' AND next_at < $1 AND client_id <> $2
			AND NOT EXISTS (SELECT 1 FROM banking_partner_webhooks p WHERE p.client_id = banking_payment_webhooks.client_id)`
			if s.db.Dialect == sqldb.Postgres {
				move = `UPDATE banking_payment_webhooks SET next_at = $1
			WHERE id IN (SELECT w.id FROM banking_payment_webhooks w WHERE w.state = 'PENDING' AND w.next_at < $1 AND w.client_id <> $2
			AND NOT EXISTS (SELECT 1 FROM banking_partner_webhooks p WHERE p.client_id = w.client_id) ORDER BY w.id FOR UPDATE)`
			}
		}
		if _, err := tx.ExecContext(ctx, move, micros(until), clientID); err != nil {
			return fmt.Errorf("webhook pause: defer events: %w", err)
		}
		return nil
	})
	return until, opened, err
}

// webhookPauseFor is the pause after the n-th consecutive failure: base,
// doubling per failure, at most max.
func webhookPauseFor(n int, base, max time.Duration) time.Duration {
	p := base
	for i := 1; i < n && p < max; i++ {
		p *= 2
	}
	return min(p, max)
}

// ReleaseWebhooks gives claimed events back unsent, due at next, with no
// attempt counted. An event whose lease is no longer the one its claim set
// (it ended and another dispatcher claimed the event, or a pause moved it)
// is left as it is: releasing it would free another dispatcher's claim.
func (s *PaymentStore) ReleaseWebhooks(ctx context.Context, evs []banking.WebhookEvent, next time.Time) error {
	if len(evs) == 0 {
		return nil
	}
	// Id order, as a claim locks rows (DueWebhooks).
	evs = slices.Clone(evs)
	slices.SortFunc(evs, func(a, b banking.WebhookEvent) int { return cmp.Compare(a.ID, b.ID) })
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		for _, ev := range evs {
			if _, err := tx.ExecContext(ctx, `UPDATE banking_payment_webhooks SET next_at = $1 WHERE id = $2 AND state = 'PENDING' AND next_at = $3`,
				micros(next), ev.ID, micros(ev.Lease)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("release webhooks: %w", err)
	}
	return nil
}

// webhookPauses is the end of every endpoint's last pause, running at now
// or not. A row lasts from an endpoint's first failure to its next
// delivery, so the table holds the endpoints found down and not since
// heard from, a few, not a row per event.
func (s *PaymentStore) webhookPauses(ctx context.Context) (map[string]time.Time, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT client_id, paused_until FROM banking_webhook_pauses WHERE failures > 0`)
	if err != nil {
		return nil, fmt.Errorf("webhook pauses: %w", err)
	}
	defer rows.Close()
	var out map[string]time.Time
	for rows.Next() {
		var id string
		var end int64
		if err := rows.Scan(&id, &end); err != nil {
			return nil, err
		}
		if out == nil {
			out = map[string]time.Time{}
		}
		out[id] = time.UnixMicro(end).UTC()
	}
	return out, rows.Err()
}

// WebhookPause reads endpoint's last pause (a partner's client ID, or
// banking.DefaultWebhookEndpoint); the zero value when it was never paused.
func (s *PaymentStore) WebhookPause(ctx context.Context, endpoint string) (banking.WebhookPause, error) {
	clientID := endpoint
	var p banking.WebhookPause
	var until int64
	err := s.db.R.QueryRowContext(ctx, `SELECT failures, paused_until FROM banking_webhook_pauses WHERE client_id = $1`, clientID).
		Scan(&p.Failures, &until)
	if errors.Is(err, sql.ErrNoRows) {
		return banking.WebhookPause{}, nil
	}
	if err != nil {
		return banking.WebhookPause{}, fmt.Errorf("webhook pause: %w", err)
	}
	if until > 0 {
		p.Until = time.UnixMicro(until).UTC()
	}
	return p, nil
}
