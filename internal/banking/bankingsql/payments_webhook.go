package bankingsql

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"partnerapi/internal/banking"
)

var _ banking.WebhookOutbox = (*PaymentStore)(nil)

// partnerOfChannel is the SQL expression of the partner client_id in a
// document's channel (banking.PartnerChannel).
var partnerOfChannel = fmt.Sprintf("substr(p.channel, %d)", len(banking.PartnerChannel(""))+1)

func (s *PaymentStore) DueWebhooks(ctx context.Context, now time.Time, limit int, configuredOnly bool) ([]banking.WebhookEvent, error) {
	q := `SELECT w.id, w.org_id, w.external_id, w.status, w.comment, w.event_time, w.attempts, COALESCE(p.channel, '')
		FROM banking_payment_webhooks w LEFT JOIN banking_payments p ON p.org_id = w.org_id AND p.external_id = w.external_id
		WHERE w.state = 'PENDING' AND w.next_at <= $1`
	if configuredOnly {
		q += ` AND EXISTS (SELECT 1 FROM banking_partner_webhooks s WHERE s.client_id = ` + partnerOfChannel + `)`
	}
	rows, err := s.db.R.QueryContext(ctx, q+` ORDER BY w.next_at, w.id LIMIT $2`, micros(now), limit)
	if err != nil {
		return nil, fmt.Errorf("due webhooks: %w", err)
	}
	defer rows.Close()
	var out []banking.WebhookEvent
	for rows.Next() {
		var ev banking.WebhookEvent
		var at int64
		var channel string
		if err := rows.Scan(&ev.ID, &ev.OrgID, &ev.ExternalID, &ev.BankStatus, &ev.BankComment, &at, &ev.Attempts, &channel); err != nil {
			return nil, err
		}
		ev.EventTime = time.UnixMicro(at).UTC()
		ev.ClientID, _ = strings.CutPrefix(channel, banking.PartnerChannel(""))
		out = append(out, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	// Claim each event for a lease so that two dispatchers (two processes on
	// one PostgreSQL) do not both send it; a dispatcher that dies mid-send
	// releases it when the lease ends.
	claimed := out[:0]
	for _, ev := range out {
		res, err := s.db.W.ExecContext(ctx, `UPDATE banking_payment_webhooks SET next_at = $1
			WHERE id = $2 AND state = 'PENDING' AND next_at <= $3`, micros(now.Add(webhookLease)), ev.ID, micros(now))
		if err != nil {
			return nil, fmt.Errorf("claim webhook: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
			claimed = append(claimed, ev)
		}
	}
	return claimed, nil
}

// webhookLease is how long a claimed event is reserved for its sender.
const webhookLease = time.Minute

func (s *PaymentStore) RecordWebhookAttempt(ctx context.Context, id int64, a banking.WebhookAttempt, delivered bool, next time.Time) error {
	state, nextAt := "PENDING", micros(next)
	var deliveredAt any
	switch {
	case delivered:
		state, nextAt, deliveredAt = "DELIVERED", 0, micros(a.At)
	case next.IsZero():
		state, nextAt = "FAILED", 0
	}
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO banking_payment_webhook_log (webhook_id, attempt, at, http_status, error) VALUES ($1,$2,$3,$4,$5)`,
			id, a.Attempt, micros(a.At), a.HTTPStatus, a.Error); err != nil {
			return fmt.Errorf("webhook log: %w", err)
		}
		_, err := tx.ExecContext(ctx, `UPDATE banking_payment_webhooks SET state = $1, attempts = $2, next_at = $3, delivered_at = $4, last_error = $5 WHERE id = $6`,
			state, a.Attempt, nextAt, deliveredAt, a.Error, id)
		return err
	})
}

func (s *PaymentStore) WebhookLog(ctx context.Context, id int64) ([]banking.WebhookAttempt, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT attempt, at, http_status, error FROM banking_payment_webhook_log WHERE webhook_id = $1 ORDER BY id`, id)
	if err != nil {
		return nil, fmt.Errorf("webhook log: %w", err)
	}
	defer rows.Close()
	var out []banking.WebhookAttempt
	for rows.Next() {
		var a banking.WebhookAttempt
		var at int64
		if err := rows.Scan(&a.Attempt, &at, &a.HTTPStatus, &a.Error); err != nil {
			return nil, err
		}
		a.At = time.UnixMicro(at).UTC()
		out = append(out, a)
	}
	return out, rows.Err()
}
