package bankingsql

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"partnerapi/internal/banking"
)

var _ banking.WebhookOutbox = (*PaymentStore)(nil)

// DueWebhooks claims due events. An event whose partner has nowhere to
// receive it (configuredOnly and no setting of its own) is parked instead:
// state PARKED, looked at again after webhookPark, woken at once when its
// partner sets a webhook (SetPartnerWebhook) or a dispatcher with a
// deployment default runs. So a tick reads only events that are due, not
// every event ever queued for partners without a URL.
func (s *PaymentStore) DueWebhooks(ctx context.Context, now time.Time, limit int, configuredOnly bool) ([]banking.WebhookEvent, error) {
	var configured map[string]bool
	if configuredOnly {
		var err error
		if configured, err = s.configuredPartners(ctx); err != nil {
			return nil, err
		}
	}
	// With nowhere to send anything, the walked documents' implied events
	// are left unwritten; the written ones are still parked below, so that
	// the dispatcher's age limit finds them (ExpireParkedWebhooks) instead
	// of their staying pending for good.
	if len(configured) > 0 || !configuredOnly {
		if err := s.materializeOutbox(ctx); err != nil {
			return nil, err
		}
	}
	due := `(w.state IN ('PENDING', 'PARKED') AND w.next_at <= $1)`
	if !configuredOnly {
		due = `(` + due + ` OR w.state = 'PARKED')`
	}
	// Whether the partner has a webhook of its own names the event's
	// endpoint: its own, or the deployment default every other partner
	// shares, paused as one receiver.
	rows, err := s.db.R.QueryContext(ctx, `SELECT w.id, w.org_id, `+outboxExternalID+`, w.status, w.comment, w.event_time, COALESCE(w.created_at, w.event_time), w.attempts, w.client_id,
		CASE WHEN EXISTS (SELECT 1 FROM banking_partner_webhooks p WHERE p.client_id = w.client_id) THEN 1 ELSE 0 END
		FROM banking_payment_webhooks w
		WHERE `+due+` ORDER BY w.next_at, w.id LIMIT $2`, micros(now), limit)
	if err != nil {
		return nil, fmt.Errorf("due webhooks: %w", err)
	}
	defer rows.Close()
	var out []banking.WebhookEvent
	for rows.Next() {
		var ev banking.WebhookEvent
		var at, queued int64
		var own int
		if err := rows.Scan(&ev.ID, &ev.OrgID, &ev.ExternalID, &ev.BankStatus, &ev.BankComment, &at, &queued, &ev.Attempts, &ev.ClientID, &own); err != nil {
			return nil, err
		}
		ev.Endpoint = banking.DefaultWebhookEndpoint
		if own == 1 {
			ev.Endpoint = ev.ClientID
		}
		ev.EventTime = time.UnixMicro(at).UTC()
		ev.CreatedAt = time.UnixMicro(queued).UTC()
		out = append(out, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	if len(out) == 0 {
		return nil, nil
	}
	// Claim each event for a lease so that two dispatchers (two processes on
	// one PostgreSQL) do not both send it; a dispatcher that dies mid-send
	// releases it when the lease ends. One transaction for the batch: one
	// commit (one fsync on SQLite) per tick, not one per event. The rows
	// are locked in id order, as a partner's new setting locks the ones it
	// wakes (setPartnerWebhook), since two transactions locking rows from
	// opposite ends deadlock on PostgreSQL; the events are still handed out
	// in the order they fell due.
	// An endpoint paused since its events fell due (PauseWebhookPartner
	// moved those it had) may have been sent new ones: they are moved to
	// the pause's end here instead of being claimed, so a restarted or
	// second dispatcher does not try a receiver another one found down.
	// An endpoint whose pause is over but that has not answered since is
	// tried with probes (banking.WebhookEvent.Probe).
	pauses, err := s.webhookPauses(ctx)
	if err != nil {
		return nil, err
	}
	order := make([]int, len(out))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(out[a].ID, out[b].ID) })
	won := make([]bool, len(out))
	var claimed []banking.WebhookEvent
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		clear(won)
		for _, i := range order {
			ev := out[i]
			state, until := "PENDING", now.Add(webhookLease)
			end, paused := pauses[ev.Endpoint]
			paused = paused && end.After(now)
			if paused {
				until = end
			}
			if configured != nil && !configured[ev.ClientID] {
				state, until, paused = "PARKED", now.Add(webhookPark), false
			}
			// The park re-checks that the partner still has no setting, so
			// a setting made since the read above is not missed.
			res, err := tx.ExecContext(ctx, `UPDATE banking_payment_webhooks SET next_at = $1, state = $2
				WHERE id = $3 AND (state = 'PARKED' OR (state = 'PENDING' AND next_at <= $4))
				AND ($2 = 'PENDING' OR NOT EXISTS (SELECT 1 FROM banking_partner_webhooks WHERE client_id = $5))`,
				micros(until), state, ev.ID, micros(now), ev.ClientID)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 1 && state == "PENDING" && !paused {
				won[i] = true
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("claim webhooks: %w", err)
	}
	for i, ev := range out {
		if won[i] {
			// The lease's end identifies this claim to ReleaseWebhooks.
			ev.Lease = now.Add(webhookLease)
			_, ev.Probe = pauses[ev.Endpoint]
			claimed = append(claimed, ev)
		}
	}
	return claimed, nil
}

// webhookPark is how long an event without a target waits before it is
// looked at again (a partner's setting wakes it at once).
const webhookPark = time.Hour

// configuredPartners is the set of partners with their own setting.
func (s *PaymentStore) configuredPartners(ctx context.Context) (map[string]bool, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT client_id FROM banking_partner_webhooks`)
	if err != nil {
		return nil, fmt.Errorf("partner webhooks: %w", err)
	}
	defer rows.Close()
	set := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		set[id] = true
	}
	return set, rows.Err()
}

// webhookLease is how long a claimed event is reserved for its sender.
const webhookLease = time.Minute

// RecordWebhookAttempt logs the attempt and sets the event's state, with
// finished_at (migration 0017) when the attempt finishes the event; an
// event already finished keeps its state (below). An
// event no longer in the outbox (finished and purged while a very late
// attempt was under way: PurgeWebhooks) gets nothing recorded and no
// error, as there is no event left to log it for or to retry: a log row
// of a missing event would stay for good, the purge reading only the
// events it deletes.
func (s *PaymentStore) RecordWebhookAttempt(ctx context.Context, id int64, a banking.WebhookAttempt, delivered bool, next time.Time) error {
	state, nextAt := "PENDING", micros(next)
	var deliveredAt, finishedAt any
	switch {
	case delivered:
		state, nextAt, deliveredAt, finishedAt = "DELIVERED", 0, micros(a.At), micros(a.At)
	case next.IsZero():
		state, nextAt, finishedAt = "FAILED", 0, micros(a.At)
	}
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		if delivered {
			// A delivery ends its endpoint's pause and resets the
			// doubling: the receiver answers again. The endpoint is the
			// partner's own webhook, or the deployment default when it
			// has none (DueWebhooks). The pause row goes first, before
			// the outbox row, in the order PauseWebhookPartner locks them.
			if _, err := tx.ExecContext(ctx, `DELETE FROM banking_webhook_pauses WHERE client_id = (
				SELECT CASE WHEN EXISTS (SELECT 1 FROM banking_partner_webhooks p WHERE p.client_id = w.client_id) THEN w.client_id ELSE $2 END
				FROM banking_payment_webhooks w WHERE w.id = $1)`, id, banking.DefaultWebhookEndpoint); err != nil {
				return fmt.Errorf("webhook pause reset: %w", err)
			}
		}
		// The outbox row goes before the log, so that the log row is
		// written only for an event that is there: on PostgreSQL the
		// update waits for a purge that is deleting the row and then
		// finds none, and a purge that comes later waits for this
		// transaction and then sees the event's new state and its log.
		//
		// Only a pending event takes the attempt's state. An event already
		// finished got its answer from a later claim while this attempt's
		// lease ran out (a store outage held it back): a late 503 must not
		// make a delivered event pending and send it again, nor a late 400
		// fail it. A late delivery still turns a failed event delivered,
		// since the partner did get it.
		res, err := tx.ExecContext(ctx, `UPDATE banking_payment_webhooks SET state = $1, attempts = $2, next_at = $3, delivered_at = $4, last_error = $5, finished_at = $6
			WHERE id = $7 AND (state = 'PENDING' OR ($1 = 'DELIVERED' AND state = 'FAILED'))`,
			state, a.Attempt, nextAt, deliveredAt, a.Error, finishedAt, id)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if n == 0 {
			// Finished or purged. The no-op update locks the row on
			// PostgreSQL, as the update above would have, so a purge
			// cannot delete it between this check and the log row.
			res, err := tx.ExecContext(ctx, `UPDATE banking_payment_webhooks SET id = id WHERE id = $1`, id)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil || n == 0 {
				return err
			}
			if a.Format == "" || a.NotSent {
				// Nothing was sent (an expiry, a failure before a target
				// was known, or one of ours before the request went
				// out): a finished event's log gets only the requests
				// that did go out.
				return nil
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO banking_payment_webhook_log (webhook_id, attempt, at, http_status, error, format) VALUES ($1,$2,$3,$4,$5,$6)`,
			id, a.Attempt, micros(a.At), a.HTTPStatus, a.Error, a.Format); err != nil {
			return fmt.Errorf("webhook log: %w", err)
		}
		return nil
	})
}

func (s *PaymentStore) WebhookLog(ctx context.Context, id int64) ([]banking.WebhookAttempt, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT attempt, at, http_status, error, format FROM banking_payment_webhook_log WHERE webhook_id = $1 ORDER BY id`, id)
	if err != nil {
		return nil, fmt.Errorf("webhook log: %w", err)
	}
	defer rows.Close()
	var out []banking.WebhookAttempt
	for rows.Next() {
		var a banking.WebhookAttempt
		var at int64
		if err := rows.Scan(&a.Attempt, &at, &a.HTTPStatus, &a.Error, &a.Format); err != nil {
			return nil, err
		}
		a.At = time.UnixMicro(at).UTC()
		out = append(out, a)
	}
	return out, rows.Err()
}
