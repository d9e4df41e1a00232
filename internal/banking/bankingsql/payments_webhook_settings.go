package bankingsql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
)

var _ banking.WebhookSettingsStore = (*PaymentStore)(nil)

func (s *PaymentStore) SetPartnerWebhook(ctx context.Context, w banking.PartnerWebhook) error {
	err := s.db.Tx(ctx, func(tx *sql.Tx) error { return setPartnerWebhook(ctx, tx, s.db.Dialect, w) })
	if err != nil {
		return fmt.Errorf("set partner webhook: %w", err)
	}
	return nil
}

// UpdatePartnerWebhook reads, changes and writes clientID's setting in one
// transaction. On SQLite the single writer's IMMEDIATE transactions already
// run one at a time; on PostgreSQL a transaction-scoped advisory lock on the
// client id serialises the updates, including two first settings, which
// have no row a FOR UPDATE could lock. The read runs after the lock is
// granted, so under READ COMMITTED it sees every update committed before.
func (s *PaymentStore) UpdatePartnerWebhook(ctx context.Context, clientID string, fn func(old banking.PartnerWebhook, found bool) (banking.PartnerWebhook, error)) error {
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		if s.db.Dialect == sqldb.Postgres {
			if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 7263003))`, clientID); err != nil {
				return err
			}
		}
		// On PostgreSQL the row is also locked as it is read: the key
		// rotation's swap of the sealed secret (ReplaceWebhookSecret) takes
		// no advisory lock, and a change that keeps the secret would
		// otherwise write back the one it read from before the swap, under
		// the key being retired. Locked, the swap waits for this commit and
		// then finds the secret it expects, or this read waits for the swap.
		q := `SELECT url, secret, format, updated_at FROM banking_partner_webhooks WHERE client_id = $1`
		if s.db.Dialect == sqldb.Postgres {
			q += ` FOR UPDATE`
		}
		var old banking.PartnerWebhook
		var at int64
		err := tx.QueryRowContext(ctx, q, clientID).Scan(&old.URL, &old.SealedSecret, &old.Format, &at)
		found := err == nil
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if found {
			old.ClientID, old.UpdatedAt = clientID, time.UnixMicro(at).UTC()
		}
		w, err := fn(old, found)
		if err != nil {
			return &fnError{err}
		}
		if w.ClientID != clientID {
			return fmt.Errorf("update of %q returned the setting of %q", clientID, w.ClientID)
		}
		return setPartnerWebhook(ctx, tx, s.db.Dialect, w)
	})
	var fe *fnError
	if errors.As(err, &fe) {
		return fe.err
	}
	if err != nil {
		return fmt.Errorf("update partner webhook: %w", err)
	}
	return nil
}

// fnError carries an error of UpdatePartnerWebhook's fn through the
// transaction, so it is returned as fn made it, not as a store failure.
type fnError struct{ err error }

func (e *fnError) Error() string { return e.err.Error() }

// setPartnerWebhook upserts w and wakes its partner's parked events.
func setPartnerWebhook(ctx context.Context, tx *sql.Tx, dialect sqldb.Dialect, w banking.PartnerWebhook) error {
	// A setting without a format is JSON, as the column's default
	// makes every setting that predates it.
	format := w.Format
	if format == "" {
		format = banking.WebhookFormatJSON
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO banking_partner_webhooks (client_id, url, secret, format, updated_at) VALUES ($1,$2,$3,$4,$5)
		ON CONFLICT (client_id) DO UPDATE SET url = excluded.url, secret = excluded.secret, format = excluded.format, updated_at = excluded.updated_at`,
		w.ClientID, w.URL, w.SealedSecret, format, micros(w.UpdatedAt)); err != nil {
		return err
	}
	if err := endWebhookPause(ctx, tx, dialect, w.ClientID, w.UpdatedAt); err != nil {
		return err
	}
	// Wake the partner's events parked while it had nowhere to
	// receive them (DueWebhooks). Walked documents' implied events
	// not yet written need no waking: they are written due
	// (payments_walk_outbox.go). On PostgreSQL the rows are locked in
	// id order first, the order a dispatcher's claim locks them in
	// (DueWebhooks): a plain UPDATE locks them in scan order, and meeting
	// a claim that holds some of them from the other end deadlocks, which
	// fails this setting. SQLite's single writer never interleaves them.
	wake := `UPDATE banking_payment_webhooks SET state = 'PENDING', next_at = $1
		WHERE state = 'PARKED' AND client_id = $2`
	if dialect == sqldb.Postgres {
		wake = `UPDATE banking_payment_webhooks SET state = 'PENDING', next_at = $1
		WHERE id IN (SELECT id FROM banking_payment_webhooks WHERE state = 'PARKED' AND client_id = $2 ORDER BY id FOR UPDATE)`
	}
	_, err := tx.ExecContext(ctx, wake, micros(w.UpdatedAt), w.ClientID)
	return err
}

// endWebhookPause ends clientID's pause (PauseWebhookPartner) as its
// setting changes: the pause was for the receiver it had, and a partner
// names a new one most often because that one was down. The events the
// pause moved (due at its end) are due again at once, not minutes later.
// The pause row is locked before the outbox rows, in the order the pause
// itself takes them.
func endWebhookPause(ctx context.Context, tx *sql.Tx, dialect sqldb.Dialect, clientID string, at time.Time) error {
	var end int64
	err := tx.QueryRowContext(ctx, `DELETE FROM banking_webhook_pauses WHERE client_id = $1 RETURNING paused_until`, clientID).Scan(&end)
	if errors.Is(err, sql.ErrNoRows) {
		// A partner without a setting of its own until now had its
		// events sent to the deployment default: those the default's
		// pause holds go to the partner's own receiver at once. The
		// default's pause itself goes on for the other partners.
		err = tx.QueryRowContext(ctx, `SELECT paused_until FROM banking_webhook_pauses WHERE client_id = $1`, banking.DefaultWebhookEndpoint).Scan(&end)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
	}
	if err == nil && end <= micros(at) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("end webhook pause: %w", err)
	}
	wake := `UPDATE banking_payment_webhooks SET next_at = $1
		WHERE client_id = $2 AND state = 'PENDING' AND next_at = $3`
	if dialect == sqldb.Postgres {
		wake = `UPDATE banking_payment_webhooks SET next_at = $1
		WHERE id IN (SELECT id FROM banking_payment_webhooks WHERE client_id = $2 AND state = 'PENDING' AND next_at = $3 ORDER BY id FOR UPDATE)`
	}
	if _, err := tx.ExecContext(ctx, wake, micros(at), clientID, end); err != nil {
		return fmt.Errorf("end webhook pause: %w", err)
	}
	return nil
}

// DeletePartnerWebhook removes clientID's setting in a transaction of its
// own, committed before it returns.
func (s *PaymentStore) DeletePartnerWebhook(ctx context.Context, clientID string) (bool, error) {
	var n int64
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM banking_partner_webhooks WHERE client_id = $1`, clientID)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return false, fmt.Errorf("delete partner webhook: %w", err)
	}
	return n > 0, nil
}

func (s *PaymentStore) GetPartnerWebhook(ctx context.Context, clientID string) (banking.PartnerWebhook, error) {
	w := banking.PartnerWebhook{ClientID: clientID}
	var at int64
	err := s.db.R.QueryRowContext(ctx, `SELECT url, secret, format, updated_at FROM banking_partner_webhooks WHERE client_id = $1`, clientID).
		Scan(&w.URL, &w.SealedSecret, &w.Format, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return banking.PartnerWebhook{}, banking.ErrNotFound
	}
	if err != nil {
		return banking.PartnerWebhook{}, fmt.Errorf("get partner webhook: %w", err)
	}
	w.UpdatedAt = time.UnixMicro(at).UTC()
	return w, nil
}

func (s *PaymentStore) PartnerDeliveries(ctx context.Context, clientID string, limit int) ([]banking.WebhookDelivery, error) {
	if err := s.materializeOutbox(ctx); err != nil {
		return nil, err
	}
	// The outbox row carries its partner, so only that partner's rows are
	// read, newest first along the (client_id, id) index.
	rows, err := s.db.R.QueryContext(ctx, `SELECT w.id, `+outboxExternalID+`, w.status, w.comment, w.event_time, w.state, w.attempts,
			w.next_at, COALESCE(w.delivered_at, 0), w.last_error
		FROM banking_payment_webhooks w
		WHERE w.client_id = $1 ORDER BY w.id DESC LIMIT $2`, clientID, limit)
	if err != nil {
		return nil, fmt.Errorf("partner deliveries: %w", err)
	}
	defer rows.Close()
	var out []banking.WebhookDelivery
	byID := map[int64]int{}
	for rows.Next() {
		var d banking.WebhookDelivery
		var ev, next, delivered int64
		if err := rows.Scan(&d.ID, &d.ExternalID, &d.BankStatus, &d.BankComment, &ev, &d.State, &d.Attempts, &next, &delivered, &d.LastError); err != nil {
			return nil, err
		}
		d.EventTime = time.UnixMicro(ev).UTC()
		if d.State == "PENDING" {
			d.NextAt = time.UnixMicro(next).UTC()
		}
		if delivered != 0 {
			d.DeliveredAt = time.UnixMicro(delivered).UTC()
		}
		byID[d.ID] = len(out)
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	if len(out) == 0 {
		return out, nil
	}
	// One query for the attempts of every listed event.
	marks := make([]string, len(out))
	args := make([]any, len(out))
	for i, d := range out {
		marks[i], args[i] = fmt.Sprintf("$%d", i+1), d.ID
	}
	logRows, err := s.db.R.QueryContext(ctx, `SELECT webhook_id, attempt, at, http_status, error, format FROM banking_payment_webhook_log
		WHERE webhook_id IN (`+strings.Join(marks, ",")+`) ORDER BY id`, args...)
	if err != nil {
		return nil, fmt.Errorf("partner delivery log: %w", err)
	}
	defer logRows.Close()
	for logRows.Next() {
		var id, at int64
		var a banking.WebhookAttempt
		if err := logRows.Scan(&id, &a.Attempt, &at, &a.HTTPStatus, &a.Error, &a.Format); err != nil {
			return nil, err
		}
		a.At = time.UnixMicro(at).UTC()
		d := &out[byID[id]]
		d.Log = append(d.Log, a)
	}
	return out, logRows.Err()
}
