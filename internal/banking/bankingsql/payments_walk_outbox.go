package bankingsql

import (
	"context"
	"database/sql"
	"fmt"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
)

// On SQLite a document created with its whole processing walk (walked_at)
// has its final status's webhook implied by its row instead of written as an
// outbox row in the create's commit (migration 0008): the group commit then
// inserts one row per document instead of two, and one B-tree entry instead
// of four. Before anything reads or changes the outbox (the dispatcher, the
// partner's delivery list, a partner's new setting waking its parked events)
// the implied rows of the documents committed since the last time are
// inserted, with exactly the values the create would have written, so every
// reader sees the same outbox as before. A deployment whose partners never
// set a webhook never pays for the rows at all. PostgreSQL keeps writing the
// rows in the create's statement: its two committers commit out of the order
// a cursor over the documents could follow.

// walkFinals are the final statuses on the processing path, each a webhook
// of a walked document (the path ends in one: IMPLEMENTED).
var walkFinals = func() []string {
	var out []string
	for _, st := range banking.ProcessingPath {
		if banking.IsFinal(st) {
			out = append(out, st)
		}
	}
	return out
}()

// walkOutboxChunk is how many documents one materializing transaction
// covers, so a long backlog (a deployment whose first partner just set a
// webhook) does not hold the writer for one huge transaction.
const walkOutboxChunk = 20000

// materializeOutbox inserts the implied outbox rows of every walked document
// committed since the last call, in transactions of walkOutboxChunk
// documents. With nothing new it costs one read.
func (s *PaymentStore) materializeOutbox(ctx context.Context) error {
	if s.db.Dialect != sqldb.SQLite {
		return nil
	}
	for {
		var done, top int64
		err := s.db.R.QueryRowContext(ctx, `SELECT last_rowid, COALESCE((SELECT MAX(rowid) FROM banking_payments), 0)
			FROM banking_payment_walk_outbox WHERE id = 1`).Scan(&done, &top)
		if err != nil {
			return fmt.Errorf("walk outbox: %w", err)
		}
		if top <= done {
			return nil
		}
		var more bool
		if err := s.db.Tx(ctx, func(tx *sql.Tx) error {
			var err error
			more, err = materializeOutboxTx(ctx, tx, walkOutboxChunk)
			return err
		}); err != nil {
			return fmt.Errorf("walk outbox: %w", err)
		}
		if !more {
			return nil
		}
	}
}

// materializeOutboxTx inserts, inside tx, the implied outbox rows of at most
// limit documents past the cursor (limit 0: all of them) and moves the
// cursor past them; it reports whether documents remain. The cursor is read
// inside tx, so two processes on one file never insert a row twice.
func materializeOutboxTx(ctx context.Context, tx *sql.Tx, limit int64) (more bool, err error) {
	var done, top int64
	if err := tx.QueryRowContext(ctx, `SELECT last_rowid, COALESCE((SELECT MAX(rowid) FROM banking_payments), 0)
		FROM banking_payment_walk_outbox WHERE id = 1`).Scan(&done, &top); err != nil {
		return false, err
	}
	if top <= done {
		return false, nil
	}
	upTo := top
	if limit > 0 && top-done > limit {
		upTo = done + limit
	}
	for _, st := range walkFinals {
		// The values newPaymentOf and writePaymentBatch give a walked
		// document's final move: no comment, event and first attempt at
		// the walk's time, the partner of its channel (PartnerOfChannel).
		if _, err := tx.ExecContext(ctx, `INSERT INTO banking_payment_webhooks (org_id, external_id, status, comment, event_time, next_at, client_id)
			SELECT org_id, external_id, $1, '', walked_at, walked_at,
				CASE WHEN substr(channel, 1, $2) = $3 THEN substr(channel, $2 + 1) ELSE channel END
			FROM banking_payments WHERE rowid > $4 AND rowid <= $5 AND walked_at IS NOT NULL ORDER BY rowid`,
			st, len(partnerPrefix), partnerPrefix, done, upTo); err != nil {
			return false, err
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE banking_payment_walk_outbox SET last_rowid = $1 WHERE id = 1`, upTo); err != nil {
		return false, err
	}
	return upTo < top, nil
}

// partnerPrefix is what PartnerOfChannel strips from an API channel.
var partnerPrefix = banking.PartnerChannel("")
