// Package assistantsql is the assistant store on SQLite and PostgreSQL.
package assistantsql

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"io/fs"
	"time"

	"partnerapi/internal/assistant"
	"partnerapi/internal/sqldb"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Migrate applies the assistant schema.
func Migrate(ctx context.Context, db *sqldb.DB) error {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return err
	}
	return db.Migrate(ctx, "assistant", sub)
}

// Store implements assistant.Store.
type Store struct{ db *sqldb.DB }

// New returns a store over db (already migrated).
func New(db *sqldb.DB) *Store { return &Store{db: db} }

var _ assistant.Store = (*Store)(nil)

// CreateClient inserts the client and its balances in one transaction.
func (s *Store) CreateClient(ctx context.Context, c assistant.Client, balances []assistant.Balance) error {
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO assistant_clients (id, secret_hash, scope, created_at) VALUES ($1, $2, $3, $4)`,
			c.ID, c.SecretHash, string(c.Scope), c.CreatedAt.Unix())
		if sqldb.IsUniqueViolation(err) {
			return assistant.ErrConflict
		} else if err != nil {
			return err
		}
		for _, b := range balances {
			if _, err := tx.ExecContext(ctx, `INSERT INTO assistant_balances (client_id, model, tokens) VALUES ($1, $2, $3)
				ON CONFLICT (client_id, model) DO UPDATE SET tokens = excluded.tokens`, c.ID, b.Model, b.Tokens); err != nil {
				return err
			}
		}
		return nil
	})
}

// Client returns a client by id.
func (s *Store) Client(ctx context.Context, id string) (assistant.Client, error) {
	var c assistant.Client
	var scope string
	var created int64
	err := s.db.R.QueryRowContext(ctx, `SELECT id, secret_hash, scope, created_at FROM assistant_clients WHERE id = $1`, id).
		Scan(&c.ID, &c.SecretHash, &scope, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return c, assistant.ErrNotFound
	} else if err != nil {
		return c, err
	}
	c.Scope = assistant.Scope(scope)
	c.CreatedAt = time.Unix(created, 0)
	return c, nil
}

// SaveToken stores an issued token by hash.
func (s *Store) SaveToken(ctx context.Context, t assistant.Token) error {
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO assistant_tokens (hash, client_id, scope, expires_at) VALUES ($1, $2, $3, $4)`,
			t.Hash, t.ClientID, string(t.Scope), t.ExpiresAt.UnixMilli())
		return err
	})
}

// Token looks a token up by hash.
func (s *Store) Token(ctx context.Context, hash string) (assistant.Token, error) {
	t := assistant.Token{Hash: hash}
	var scope string
	var exp int64
	err := s.db.R.QueryRowContext(ctx, `SELECT client_id, scope, expires_at FROM assistant_tokens WHERE hash = $1`, hash).
		Scan(&t.ClientID, &scope, &exp)
	if errors.Is(err, sql.ErrNoRows) {
		return t, assistant.ErrNotFound
	} else if err != nil {
		return t, err
	}
	t.Scope = assistant.Scope(scope)
	t.ExpiresAt = time.UnixMilli(exp)
	return t, nil
}

// DeleteExpiredTokens drops tokens that expired before now.
func (s *Store) DeleteExpiredTokens(ctx context.Context, now time.Time) error {
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM assistant_tokens WHERE expires_at < $1`, now.UnixMilli())
		return err
	})
}

// Balances lists a client's prepaid balances by model.
func (s *Store) Balances(ctx context.Context, clientID string) ([]assistant.Balance, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT model, tokens FROM assistant_balances WHERE client_id = $1 ORDER BY model`, clientID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []assistant.Balance{}
	for rows.Next() {
		var b assistant.Balance
		if err := rows.Scan(&b.Model, &b.Tokens); err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

// Charge decrements a balance in one statement, so concurrent requests of one
// client never lose an update; a balance never goes below zero. A bill
// whose id was applied already charges nothing.
func (s *Store) Charge(ctx context.Context, b assistant.Bill) error {
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		if applied, err := applyBill(ctx, tx, b); err != nil || applied {
			return err
		}
		var left int64
		err := tx.QueryRowContext(ctx, `UPDATE assistant_balances
			SET tokens = CASE WHEN tokens > $1 THEN tokens - $1 ELSE 0 END
			WHERE client_id = $2 AND model = $3 AND tokens > 0 RETURNING tokens`, b.Tokens, b.ClientID, b.Model).Scan(&left)
		if errors.Is(err, sql.ErrNoRows) {
			// The rollback takes the bill's id back too: the bill was not
			// applied.
			return assistant.ErrPaymentRequired
		}
		return err
	})
}

// RecordUsage adds postpaid usage, once for a bill id.
func (s *Store) RecordUsage(ctx context.Context, b assistant.Bill) error {
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		if applied, err := applyBill(ctx, tx, b); err != nil || applied {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO assistant_usage (client_id, model, tokens) VALUES ($1, $2, $3)
			ON CONFLICT (client_id, model) DO UPDATE SET tokens = assistant_usage.tokens + excluded.tokens`, b.ClientID, b.Model, b.Tokens)
		return err
	})
}

// applyBill records b's id in tx and reports whether it was recorded
// already, in which case the bill must charge nothing. Two transactions
// with one id cannot both insert it: on PostgreSQL the second waits on the
// first's row of the unique key and then finds it, and SQLite has one
// writer at a time.
func applyBill(ctx context.Context, tx *sql.Tx, b assistant.Bill) (applied bool, err error) {
	if b.ID == "" {
		return false, errors.New("assistantsql: a bill without an id")
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO assistant_applied_bills (id, made_at) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING`,
		b.ID, b.MadeAt.UnixMilli())
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, err
	}
	return n == 0, nil
}

// DeleteAppliedBills forgets the ids of bills made before before.
func (s *Store) DeleteAppliedBills(ctx context.Context, before time.Time) error {
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM assistant_applied_bills WHERE made_at < $1`, before.UnixMilli())
		return err
	})
}

// Usage lists a client's postpaid usage by model.
func (s *Store) Usage(ctx context.Context, clientID string) ([]assistant.UsageRecord, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT model, tokens FROM assistant_usage WHERE client_id = $1 ORDER BY model`, clientID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []assistant.UsageRecord{}
	for rows.Next() {
		var u assistant.UsageRecord
		if err := rows.Scan(&u.Model, &u.Tokens); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, rows.Err()
}
