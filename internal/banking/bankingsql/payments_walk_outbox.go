package bankingsql

import (
	"context"
	"database/sql"
	"fmt"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
)

// A document created with its whole processing walk (walked_at) has its
// final status's webhook implied by its row instead of written as an outbox
// row by the create (migration 0008): SQLite's group commit inserts one row
// per document instead of two (one B-tree entry instead of four), and
// PostgreSQL one heap tuple and two index entries instead of two tuples and
// four entries. Before anything reads the outbox (the dispatcher, the
// partner's delivery list) the implied rows of the documents committed since
// the last time are inserted, with exactly the values the create used to write, so every
// reader sees the same outbox as before; only their ids come later than
// those of rows written in between. A deployment whose partners never set a
// webhook never pays for the rows at all.
//
// The documents past the cursor are found by position: the rowid on SQLite
// (a new row gets the largest rowid plus one, and documents are never
// deleted), a sequence on PostgreSQL. PostgreSQL's creates commit out of
// the order their positions were drawn (two committers, several
// processes), so there the materializer first takes a SHARE lock on the
// documents: it waits for every transaction writing them to end and holds
// off new ones until it commits, so no document with a position it passed
// can appear later. SQLite's single writer needs no such lock.

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

// walkOutboxChunk is how many positions one materializing transaction
// covers, so a long backlog (a deployment whose first partner just set a
// webhook) does not hold the writer (SQLite) or the documents' lock
// (PostgreSQL) for one huge transaction.
const walkOutboxChunk = 20000

// docPosition is the column ordering the documents as materialization
// follows them.
func docPosition(d sqldb.Dialect) string {
	if d == sqldb.Postgres {
		return "seq"
	}
	return "rowid"
}

// cursorQuery reads the materialization cursor and the newest document's
// position, the pair both the lock-free check and the transaction compare.
func cursorQuery(d sqldb.Dialect) string {
	return `SELECT last_doc, COALESCE((SELECT MAX(` + docPosition(d) + `) FROM banking_payments), 0)
		FROM banking_payment_walk_outbox WHERE id = 1`
}

// materializeOutbox inserts the implied outbox rows of every walked document
// committed before the call, in transactions of walkOutboxChunk positions.
// With nothing new it costs one read and takes no lock.
func (s *PaymentStore) materializeOutbox(ctx context.Context) error {
	cursor := cursorQuery(s.db.Dialect)
	for {
		var done, top int64
		err := s.db.R.QueryRowContext(ctx, cursor).Scan(&done, &top)
		if err != nil {
			return fmt.Errorf("walk outbox: %w", err)
		}
		if top <= done {
			return nil
		}
		var more bool
		if err := s.db.Tx(ctx, func(tx *sql.Tx) error {
			var err error
			more, err = materializeOutboxTx(ctx, s.db.Dialect, tx, walkOutboxChunk)
			return err
		}); err != nil {
			return fmt.Errorf("walk outbox: %w", err)
		}
		if !more {
			return nil
		}
	}
}

// materializeOutboxTx inserts, inside tx, the implied outbox rows of the
// documents at most limit positions past the cursor (limit 0: all of them)
// and moves the cursor past them; it reports whether documents remain. The
// cursor is read locked inside tx, so two materializers (two processes)
// never insert a row twice.
func materializeOutboxTx(ctx context.Context, d sqldb.Dialect, tx *sql.Tx, limit int64) (more bool, err error) {
	pos := docPosition(d)
	lock := ""
	if d == sqldb.Postgres {
		if _, err := tx.ExecContext(ctx, `LOCK TABLE banking_payments IN SHARE MODE`); err != nil {
			return false, err
		}
		lock = " FOR UPDATE"
	}
	var done, top int64
	if err := tx.QueryRowContext(ctx, cursorQuery(d)+lock).Scan(&done, &top); err != nil {
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
		// The values newPaymentOf and the batch writers gave a walked
		// document's final move: no comment, event and first attempt at
		// the walk's time, the partner of its channel (PartnerOfChannel),
		// and the externalId as the partner sent it when that is not the
		// key (payments_webhook_sent.go). It was queued with its document,
		// in the walk, not when it is materialized: its created_at is left
		// NULL, which reads as its event_time, the walk's time.
		if _, err := tx.ExecContext(ctx, `INSERT INTO banking_payment_webhooks (org_id, external_id, sent_external_id, status, comment, event_time, next_at, client_id)
			SELECT org_id, external_id, `+docSentExternalID(d)+`, $1, '', walked_at, walked_at,
				CASE WHEN substr(channel, 1, $2) = $3 THEN substr(channel, $2 + 1) ELSE channel END
			FROM banking_payments WHERE `+pos+` > $4 AND `+pos+` <= $5 AND walked_at IS NOT NULL ORDER BY `+pos,
			st, len(partnerPrefix), partnerPrefix, done, upTo); err != nil {
			return false, err
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE banking_payment_walk_outbox SET last_doc = $1 WHERE id = 1`, upTo); err != nil {
		return false, err
	}
	return upTo < top, nil
}

// partnerPrefix is what PartnerOfChannel strips from an API channel.
var partnerPrefix = banking.PartnerChannel("")
