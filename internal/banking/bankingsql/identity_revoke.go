package bankingsql

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"partnerapi/internal/sqldb"
)

// RevokeGrant revokes the token hash and every other token of its chain,
// access and refresh alike, in one transaction. A chain is one grant: the
// pair issued for a code (or by the CLI) and every pair refreshed from it
// carry its name (migration 0003), so the chain is what links an access
// token to the refresh tokens it was issued with.
func (s *IdentityStore) RevokeGrant(ctx context.Context, hash string, now time.Time) error {
	var revoked []string
	defer func() {
		// Forgotten once committed (or rolled back), so no read before the
		// change is cached past it.
		for _, h := range revoked {
			forgetToken(s.db, h)
		}
		forgetToken(s.db, hash)
	}()
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		t, err := getToken(ctx, tx, hash)
		if err != nil {
			return err
		}
		chain := tokenChain(t)
		if s.db.Dialect == sqldb.Postgres {
			// The lock RotateRefresh takes: a rotation of this chain under
			// way would otherwise add a live pair the update below, not
			// seeing it uncommitted, leaves alone.
			if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 7263002))`, chain); err != nil {
				return err
			}
		}
		rows, err := tx.QueryContext(ctx, `UPDATE banking_tokens SET revoked_at = $2 WHERE chain = $1 AND revoked_at = 0 RETURNING hash`, chain, idNanos(now))
		if err != nil {
			return err
		}
		for rows.Next() {
			var h string
			if err := rows.Scan(&h); err != nil {
				rows.Close()
				return err
			}
			revoked = append(revoked, h)
		}
		return errors.Join(rows.Err(), rows.Close())
	})
}
