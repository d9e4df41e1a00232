package assistantsql

import (
	"context"
	"database/sql"
	"time"
)

// AuthFailures returns the times of clientID's latest failed secret checks
// from addr after since, newest first, at most limit of them.
func (s *Store) AuthFailures(ctx context.Context, clientID, addr string, since time.Time, limit int) ([]time.Time, error) {
	rows, err := s.db.R.QueryContext(ctx,
		`SELECT at FROM assistant_auth_failures WHERE client_id = $1 AND addr = $2 AND at > $3 ORDER BY at DESC LIMIT $4`,
		clientID, addr, since.UnixNano(), limit)
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
// own: rows only come from failures.
func (s *Store) AddAuthFailure(ctx context.Context, clientID, addr string, at, expired time.Time) error {
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM assistant_auth_failures WHERE at <= $1`, expired.UnixNano()); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO assistant_auth_failures (client_id, addr, at) VALUES ($1, $2, $3)`,
			clientID, addr, at.UnixNano())
		return err
	})
}

// ForgetAuthFailures drops clientID's failures from addr after a
// successful check; other addresses' failures stay.
func (s *Store) ForgetAuthFailures(ctx context.Context, clientID, addr string) error {
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM assistant_auth_failures WHERE client_id = $1 AND addr = $2`, clientID, addr)
		return err
	})
}
