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
		// The lock RotateRefresh takes: a rotation of this chain under way
		// would otherwise add a live pair the update below, not seeing it
		// uncommitted, leaves alone.
		if err := lockChain(ctx, tx, s.db.Dialect, chain); err != nil {
			return err
		}
		revoked, err = updatedHashes(ctx, tx, `UPDATE banking_tokens SET revoked_at = $2 WHERE chain = $1 AND revoked_at = 0 RETURNING hash`, chain, idNanos(now))
		return err
	})
}

// RevokeChain revokes every live token of chain issued to clientID in one
// transaction, under the chain's lock as RevokeGrant; a chain with no such
// token is no error.
func (s *IdentityStore) RevokeChain(ctx context.Context, chain, clientID string, now time.Time) error {
	var revoked []string
	defer func() {
		for _, h := range revoked {
			forgetToken(s.db, h)
		}
	}()
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := lockChain(ctx, tx, s.db.Dialect, chain); err != nil {
			return err
		}
		var err error
		revoked, err = updatedHashes(ctx, tx, `UPDATE banking_tokens SET revoked_at = $3 WHERE chain = $1 AND client_id = $2 AND revoked_at = 0 RETURNING hash`, chain, clientID, idNanos(now))
		return err
	})
}

// lockChain serialises the transactions that change one token chain on
// PostgreSQL, where two could otherwise each miss the other's uncommitted
// tokens; SQLite's IMMEDIATE transactions already run one at a time.
func lockChain(ctx context.Context, tx *sql.Tx, dialect sqldb.Dialect, chain string) error {
	if dialect != sqldb.Postgres {
		return nil
	}
	_, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 7263002))`, chain)
	return err
}

// updatedHashes runs an UPDATE … RETURNING hash and collects the hashes, so
// the caller can drop them from the token cache once committed.
func updatedHashes(ctx context.Context, tx *sql.Tx, query string, args ...any) ([]string, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	var out []string
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, h)
	}
	return out, errors.Join(rows.Err(), rows.Close())
}
