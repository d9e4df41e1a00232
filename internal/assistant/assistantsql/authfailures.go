package assistantsql

import (
	"context"
	"database/sql"
	"strconv"
	"time"

	"partnerapi/internal/sqldb"
)

// authAddrLockClass is the first key of the PostgreSQL advisory locks that
// serialise the failure writes of one address (the second is a hash of the
// address), so that two processes can never both find the address one
// under its cap and both write. It is a two-key lock, apart from the
// migrators' single key and the lease locks' class.
const authAddrLockClass = 7263004

// AuthFailures returns the times of clientID's latest failed secret checks
// from addr after since, newest first, at most limit of them.
func (s *Store) AuthFailures(ctx context.Context, clientID, addr string, since time.Time, limit int) ([]time.Time, error) {
	return s.failureTimes(ctx,
		`SELECT at FROM assistant_auth_failures WHERE client_id = $1 AND addr = $2 AND at > $3 ORDER BY at DESC LIMIT $4`,
		clientID, addr, since.UnixNano(), limit)
}

// AddrAuthFailures returns the times of the latest failed secret checks
// from addr after since, of any client id, newest first, at most limit of
// them.
func (s *Store) AddrAuthFailures(ctx context.Context, addr string, since time.Time, limit int) ([]time.Time, error) {
	return s.failureTimes(ctx,
		`SELECT at FROM assistant_auth_failures WHERE addr = $1 AND at > $2 ORDER BY at DESC LIMIT $3`,
		addr, since.UnixNano(), limit)
}

func (s *Store) failureTimes(ctx context.Context, query string, args ...any) ([]time.Time, error) {
	rows, err := s.db.R.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []time.Time
	for rows.Next() {
		var at int64
		if err := rows.Scan(&at); err != nil {
			return nil, err
		}
		out = append(out, time.Unix(0, at))
	}
	return out, rows.Err()
}

// AddAuthFailure records one failure and deletes the expired ones of every
// client in the same transaction. Deleting as failures arrive keeps the
// table as small as the throttle's window allows without a sweeper of its
// own: rows only come from failures. With addrLimit > 0 the failure is
// recorded only while addr has fewer than addrLimit failures left after
// the delete, so one address never holds more than addrLimit rows however
// many client ids it makes up; the count it found is returned either way.
// On PostgreSQL one address's writes queue on an advisory lock for that
// count (SQLite's one writer already runs them one at a time); the lock
// is taken only by failures, never by a token request that succeeds.
func (s *Store) AddAuthFailure(ctx context.Context, clientID, addr string, at, expired time.Time, addrLimit int) (int, error) {
	n := 0
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		n = 0
		if addrLimit > 0 && s.db.Dialect == sqldb.Postgres {
			if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(`+strconv.Itoa(authAddrLockClass)+`, hashtext($1))`, addr); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM assistant_auth_failures WHERE at <= $1`, expired.UnixNano()); err != nil {
			return err
		}
		if addrLimit > 0 {
			// Every row left is inside the window. The subquery's LIMIT
			// reads at most addrLimit entries of the (addr, at) index,
			// even for an address that holds more (written before the
			// cap was lowered).
			if err := tx.QueryRowContext(ctx,
				`SELECT COUNT(*) FROM (SELECT 1 FROM assistant_auth_failures WHERE addr = $1 LIMIT $2) AS f`,
				addr, addrLimit).Scan(&n); err != nil {
				return err
			}
			if n >= addrLimit {
				return nil
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO assistant_auth_failures (client_id, addr, at) VALUES ($1, $2, $3)`,
			clientID, addr, at.UnixNano())
		return err
	})
	return n, err
}

// ForgetAuthFailures drops clientID's failures from addr after a
// successful check; other addresses' failures stay.
func (s *Store) ForgetAuthFailures(ctx context.Context, clientID, addr string) error {
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM assistant_auth_failures WHERE client_id = $1 AND addr = $2`, clientID, addr)
		return err
	})
}
