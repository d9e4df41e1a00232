package bankingsql

import (
	"context"
	"database/sql"
	"time"

	"partnerapi/internal/banking"
)

var _ banking.LoginFailureStore = (*IdentityStore)(nil)

// LoginFailures counts login's failures from client after since.
func (s *IdentityStore) LoginFailures(ctx context.Context, login, client string, since time.Time) (int, error) {
	var n int
	err := s.db.R.QueryRowContext(ctx,
		`SELECT COUNT(*) FROM banking_login_failures WHERE login = $1 AND client = $2 AND at > $3`,
		login, client, idNanos(since)).Scan(&n)
	return n, err
}

// AddLoginFailure records one failure and deletes the expired ones in the
// same transaction. Deleting as failures arrive keeps the table as small
// as the throttle's window allows without a sweeper of its own: rows only
// come from failures, each of which costs the caller a full PBKDF2.
func (s *IdentityStore) AddLoginFailure(ctx context.Context, login, client string, at, expired time.Time) error {
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM banking_login_failures WHERE at <= $1`, idNanos(expired)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO banking_login_failures (login, client, at) VALUES ($1, $2, $3)`,
			login, client, idNanos(at))
		return err
	})
}

// ForgetLoginFailures drops login's failures from client after a
// successful sign-in.
func (s *IdentityStore) ForgetLoginFailures(ctx context.Context, login, client string) error {
	_, err := s.db.W.ExecContext(ctx, `DELETE FROM banking_login_failures WHERE login = $1 AND client = $2`, login, client)
	return err
}
