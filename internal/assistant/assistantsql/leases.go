package assistantsql

import (
	"context"
	"database/sql"
	"slices"
	"strconv"
	"strings"
	"time"

	"partnerapi/internal/assistant"
	"partnerapi/internal/sqldb"
)

// leaseLockClass is the first key of the PostgreSQL advisory locks that
// serialise one client's acquisitions (the second is a hash of the client's
// id). Two-key advisory locks are a key space of their own, apart from the
// single-key lock the migrators take.
const leaseLockClass = 7263002

// asyncCommit, selected in a PostgreSQL transaction, lets that transaction
// commit without waiting for its WAL to reach the disk. A lease is worth
// nothing after a crash of the database (every request it counted has lost
// its connection too), so waiting for the flush would only make each chat
// wait for an fsync twice and add to the flushes the banking creates' group
// commits wait for. If PostgreSQL itself crashes, the last moment's
// acquisitions may be lost (their requests run uncounted until they end)
// and its releases too (those slots stay taken until the lease lapses).
// Other sessions see the commit at once either way, so the per-client
// serialisation is unchanged.
const asyncCommit = `set_config('synchronous_commit', 'off', true)`

// renewChunk bounds the ids in one renewal statement, well under either
// engine's limit on bound parameters.
const renewChunk = 500

// AcquireLease inserts l unless the client already holds limit leases that
// are live at now. The client's expired leases are dropped first, in the
// same transaction. On PostgreSQL, whose transactions run concurrently, the
// client's acquisitions queue on a transaction-scoped advisory lock, so two
// processes can never both count limit-1 and both insert; on SQLite the
// one writer connection and its IMMEDIATE transactions already run them one
// at a time. A lock of the client's row would serialise them too, but it
// would also queue them behind every other write that takes that row.
func (s *Store) AcquireLease(ctx context.Context, l assistant.Lease, limit int, now time.Time) error {
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		if s.db.Dialect == sqldb.Postgres {
			if _, err := tx.ExecContext(ctx, `SELECT `+asyncCommit+`, pg_advisory_xact_lock(`+strconv.Itoa(leaseLockClass)+`, hashtext($1))`, l.ClientID); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM assistant_leases WHERE client_id = $1 AND expires_at <= $2`, l.ClientID, now.UnixMilli()); err != nil {
			return err
		}
		var live int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM assistant_leases WHERE client_id = $1`, l.ClientID).Scan(&live); err != nil {
			return err
		}
		if live >= limit {
			return assistant.ErrTooManyRequests
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO assistant_leases (id, client_id, expires_at) VALUES ($1, $2, $3)`,
			l.ID, l.ClientID, l.ExpiresAt.UnixMilli())
		return err
	})
}

// RenewLeases moves the expiry of the named leases that are still live at
// now to until. A lease that has expired stays expired: another process may
// already have counted its slot free and given it out. The ids go in
// sorted chunks, so two renewals that meet lock rows in the same order.
func (s *Store) RenewLeases(ctx context.Context, ids []string, now, until time.Time) (int, error) {
	ids = slices.Sorted(slices.Values(ids))
	renewed := 0
	for chunk := range slices.Chunk(ids, renewChunk) {
		var q strings.Builder
		q.WriteString(`UPDATE assistant_leases SET expires_at = $1 WHERE expires_at > $2 AND id IN (`)
		args := []any{until.UnixMilli(), now.UnixMilli()}
		for i, id := range chunk {
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteString("$" + strconv.Itoa(len(args)+1))
			args = append(args, id)
		}
		q.WriteString(")")
		res, err := s.db.W.ExecContext(ctx, q.String(), args...)
		if err != nil {
			return renewed, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return renewed, err
		}
		renewed += int(n)
	}
	return renewed, nil
}

// ReleaseLease deletes a lease. On PostgreSQL it commits without waiting
// for the flush (asyncCommit), which takes a transaction of its own.
func (s *Store) ReleaseLease(ctx context.Context, id string) error {
	if s.db.Dialect != sqldb.Postgres {
		_, err := s.db.W.ExecContext(ctx, `DELETE FROM assistant_leases WHERE id = $1`, id)
		return err
	}
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `SELECT `+asyncCommit); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM assistant_leases WHERE id = $1`, id)
		return err
	})
}
