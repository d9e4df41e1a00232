package bankingsql

import (
	"context"
	"database/sql"
)

// RecordKeyIdentity records present as the identity of the key name unless
// one is recorded already, and returns the recorded one. The insert and
// the read share a transaction and the insert does nothing on a row that
// exists, so replicas starting at once on an empty record all get the one
// identity that won, whichever it is.
func (s *IdentityStore) RecordKeyIdentity(ctx context.Context, name, present string) (recorded string, err error) {
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO banking_key_identities (name, identity) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`, name, present); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `SELECT identity FROM banking_key_identities WHERE name = $1`, name).Scan(&recorded)
	})
	return recorded, err
}

// MoveKeyIdentity replaces the identity of the key name by to when it is
// still from, and reports whether it did: a webhook key rotation moving
// the record to the new key, which a replica that moved it first has
// already done.
func (s *IdentityStore) MoveKeyIdentity(ctx context.Context, name, from, to string) (bool, error) {
	res, err := s.db.W.ExecContext(ctx, `UPDATE banking_key_identities SET identity = $1 WHERE name = $2 AND identity = $3`, to, name, from)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// SetKeyIdentity records identity for the key name whatever was recorded:
// the operator adopting a key rotated on purpose.
func (s *IdentityStore) SetKeyIdentity(ctx context.Context, name, identity string) error {
	_, err := s.db.W.ExecContext(ctx, `INSERT INTO banking_key_identities (name, identity) VALUES ($1, $2)
		ON CONFLICT (name) DO UPDATE SET identity = excluded.identity`, name, identity)
	return err
}
