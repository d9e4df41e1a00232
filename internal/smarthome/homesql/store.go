// Package homesql is smarthome.Store on SQLite or PostgreSQL.
package homesql

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"time"

	"partnerapi/internal/smarthome"
	"partnerapi/internal/sqldb"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Migrate applies the smart-home migrations.
func Migrate(ctx context.Context, db *sqldb.DB) error {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return err
	}
	return db.Migrate(ctx, "smarthome", sub)
}

// Store is smarthome.Store over a sqldb.DB.
type Store struct{ db *sqldb.DB }

// New wraps db.
func New(db *sqldb.DB) *Store { return &Store{db: db} }

var _ smarthome.Store = (*Store)(nil)

// Seed writes the catalog in one transaction. The guard row goes in first
// with ON CONFLICT DO NOTHING, so of two processes starting at once exactly
// one seeds and the other sees a complete catalog or waits for it.
func (s *Store) Seed(ctx context.Context, c *smarthome.Catalog) (bool, error) {
	wrote := false
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		now := time.Now().Unix()
		res, err := tx.ExecContext(ctx, `INSERT INTO home_catalog (id, version, label, updated_at) VALUES (1, 1, $1, $2)
			ON CONFLICT (id) DO NOTHING`, c.Label, now)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		wrote = true
		for _, name := range sortedKeys(c.Features) {
			f := c.Features[name]
			spec, err := json.Marshal(f)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO home_features (name, data_type, spec) VALUES ($1, $2, $3)`,
				name, f.DataType, string(spec)); err != nil {
				return fmt.Errorf("feature %s: %w", name, err)
			}
		}
		for _, name := range c.CategoryNames() {
			cat := c.Categories[name]
			spec, err := json.Marshal(cat)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO home_categories (name, spec) VALUES ($1, $2)`, name, string(spec)); err != nil {
				return fmt.Errorf("category %s: %w", name, err)
			}
			for i, f := range cat.Features {
				req := 0
				if cat.IsRequired(f) {
					req = 1
				}
				if _, err := tx.ExecContext(ctx, `INSERT INTO home_category_features (category, position, feature, required)
					VALUES ($1, $2, $3, $4)`, name, i, f, req); err != nil {
					return fmt.Errorf("category %s feature %s: %w", name, f, err)
				}
			}
		}
		for _, m := range c.Models {
			if err := putModel(ctx, tx, m, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("seed catalog: %w", err)
	}
	return wrote, nil
}

func putModel(ctx context.Context, tx *sql.Tx, m smarthome.Model, now int64) error {
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO home_models (id, category, body, updated_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (id) DO UPDATE SET category = excluded.category, body = excluded.body, updated_at = excluded.updated_at`,
		m.ID, m.Category, string(body), now)
	if err != nil {
		return fmt.Errorf("model %s: %w", m.ID, err)
	}
	return nil
}

// bump raises the catalog version inside a write transaction.
func bump(ctx context.Context, tx *sql.Tx, now int64) (int64, error) {
	var v int64
	err := tx.QueryRowContext(ctx, `UPDATE home_catalog SET version = version + 1, updated_at = $1 WHERE id = 1 RETURNING version`, now).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("catalog not seeded: %w", smarthome.ErrNotFound)
	}
	return v, err
}

// Version reads the catalog version.
func (s *Store) Version(ctx context.Context) (int64, error) {
	var v int64
	err := s.db.R.QueryRowContext(ctx, `SELECT version FROM home_catalog WHERE id = 1`).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("catalog not seeded: %w", smarthome.ErrNotFound)
	}
	return v, err
}

// Stamp reads the catalog version and the credentials counter.
func (s *Store) Stamp(ctx context.Context) (smarthome.Stamp, error) {
	var st smarthome.Stamp
	err := s.db.R.QueryRowContext(ctx, `SELECT version, credentials_version FROM home_catalog WHERE id = 1`).
		Scan(&st.Catalog, &st.Credentials)
	if errors.Is(err, sql.ErrNoRows) {
		return st, fmt.Errorf("catalog not seeded: %w", smarthome.ErrNotFound)
	}
	return st, err
}

// Load reads the catalog in one read transaction so version and contents
// agree. SQLite's read transaction is one snapshot of the WAL already;
// PostgreSQL's default READ COMMITTED takes a new snapshot per statement,
// so a model put committing between the version's read and the models'
// would be served under the version before it. REPEATABLE READ reads every
// statement from the transaction's first snapshot.
func (s *Store) Load(ctx context.Context) (*smarthome.Catalog, error) {
	opts := &sql.TxOptions{ReadOnly: true}
	if s.db.Dialect == sqldb.Postgres {
		opts.Isolation = sql.LevelRepeatableRead
	}
	tx, err := s.db.R.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	c := &smarthome.Catalog{Features: map[string]*smarthome.Feature{}, Categories: map[string]*smarthome.Category{}, Models: []smarthome.Model{}}
	var updated int64
	err = tx.QueryRowContext(ctx, `SELECT version, label, updated_at FROM home_catalog WHERE id = 1`).Scan(&c.Version, &c.Label, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("catalog not seeded: %w", smarthome.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	c.Updated = time.Unix(updated, 0).UTC()
	if err := each(ctx, tx, `SELECT name, spec FROM home_features`, func(name, spec string) error {
		f := &smarthome.Feature{}
		if err := json.Unmarshal([]byte(spec), f); err != nil {
			return fmt.Errorf("feature %s: %w", name, err)
		}
		f.Name = name
		c.Features[name] = f
		return nil
	}); err != nil {
		return nil, err
	}
	if err := each(ctx, tx, `SELECT name, spec FROM home_categories`, func(name, spec string) error {
		cat := &smarthome.Category{}
		if err := json.Unmarshal([]byte(spec), cat); err != nil {
			return fmt.Errorf("category %s: %w", name, err)
		}
		// The relational rows are the truth for membership and order.
		cat.Name, cat.Features, cat.Required = name, []string{}, []string{}
		c.Categories[name] = cat
		return nil
	}); err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT category, feature, required FROM home_category_features ORDER BY category, position`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var cat, f string
		var req int
		if err := rows.Scan(&cat, &f, &req); err != nil {
			rows.Close()
			return nil, err
		}
		cc := c.Categories[cat]
		cc.Features = append(cc.Features, f)
		if req != 0 {
			cc.Required = append(cc.Required, f)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if err := each(ctx, tx, `SELECT id, body FROM home_models`, func(id, body string) error {
		var m smarthome.Model
		if err := json.Unmarshal([]byte(body), &m); err != nil {
			return fmt.Errorf("model %s: %w", id, err)
		}
		c.Models = append(c.Models, m)
		return nil
	}); err != nil {
		return nil, err
	}
	// Models are served in ASCII order of id (reference §8.5: agents cache
	// the list, so its order must be stable). ORDER BY would follow the
	// database's collation, which on PostgreSQL is often a linguistic one
	// (en_US puts "light.x" before "Mdl_x"), and SQLite knows no "C"
	// collation to ask for, so the order is made here.
	sort.Slice(c.Models, func(i, j int) bool { return c.Models[i].ID < c.Models[j].ID })
	return c, nil
}

func each(ctx context.Context, tx *sql.Tx, q string, fn func(a, b string) error) error {
	rows, err := tx.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var a, b string
		if err := rows.Scan(&a, &b); err != nil {
			return err
		}
		if err := fn(a, b); err != nil {
			return err
		}
	}
	return rows.Err()
}

// PutModel creates or replaces a model and bumps the version. The bump
// comes first: it locks the catalog row until the commit, so model writes
// run one at a time on PostgreSQL too, and the existence check after it
// (a statement of its own, which under READ COMMITTED sees every write
// committed before the lock was granted) tells a creation from a
// replacement even when two puts of one new id arrive together. Checked
// before the lock, both would see no row and both answer 201.
func (s *Store) PutModel(ctx context.Context, m smarthome.Model) (bool, int64, error) {
	var created bool
	var v int64
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		now := time.Now().Unix()
		var err error
		if v, err = bump(ctx, tx, now); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM home_models WHERE id = $1`, m.ID).Scan(&n); err != nil {
			return err
		}
		created = n == 0
		return putModel(ctx, tx, m, now)
	})
	return created, v, err
}

// DeleteModel removes a model and bumps the version. The bump comes first,
// as in PutModel: every model write locks the catalog row before a model's,
// so a put and a delete of one model never each hold the row the other
// waits for (PostgreSQL would fail one of them as a deadlock). A delete
// that finds no model rolls its bump back.
func (s *Store) DeleteModel(ctx context.Context, id string) (int64, error) {
	var v int64
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		var err error
		if v, err = bump(ctx, tx, time.Now().Unix()); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM home_models WHERE id = $1`, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return fmt.Errorf("model %q: %w", id, smarthome.ErrNotFound)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return v, nil
}

// CreateCredential stores a credential hash.
func (s *Store) CreateCredential(ctx context.Context, kind, login, hash string) error {
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO home_credentials (kind, login, secret_hash, created_at) VALUES ($1, $2, $3, $4)`,
			kind, login, hash, time.Now().Unix())
		if err != nil {
			return err
		}
		return bumpCredentials(ctx, tx)
	})
	if sqldb.IsUniqueViolation(err) {
		return smarthome.ErrDuplicate
	}
	return err
}

// ReplaceCredential changes a credential hash.
func (s *Store) ReplaceCredential(ctx context.Context, kind, login, hash string) error {
	return s.changeCredential(ctx, nil, `UPDATE home_credentials SET secret_hash = $3 WHERE kind = $1 AND login = $2`, kind, login, hash)
}

// DeleteCredential removes a credential. An agent's also leaves the MQTT
// gates' list of agents heard (home_mqtt_agents, gate.go) in the same
// transaction: the next leader would skip it anyway, but its row would stay
// for good, one per agent ever deleted.
func (s *Store) DeleteCredential(ctx context.Context, kind, login string) error {
	return s.changeCredential(ctx, func(tx *sql.Tx) error {
		if kind != smarthome.KindAgent {
			return nil
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM home_mqtt_agents WHERE name = $1`, login)
		return err
	}, `DELETE FROM home_credentials WHERE kind = $1 AND login = $2`, kind, login)
}

// changeCredential runs an UPDATE or DELETE of one credential row, then
// also (when not nil) in the same transaction, and bumps the credentials
// counter in it.
func (s *Store) changeCredential(ctx context.Context, also func(tx *sql.Tx) error, q string, args ...any) error {
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return smarthome.ErrNotFound
		}
		if also != nil {
			if err := also(tx); err != nil {
				return err
			}
		}
		return bumpCredentials(ctx, tx)
	})
}

// bumpCredentials raises the credentials counter. Before the catalog is
// seeded there is no row and nothing can have cached a credential yet.
func bumpCredentials(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `UPDATE home_catalog SET credentials_version = credentials_version + 1 WHERE id = 1`)
	return err
}

// CredentialHash reads a credential hash.
func (s *Store) CredentialHash(ctx context.Context, kind, login string) (string, error) {
	var h string
	err := s.db.R.QueryRowContext(ctx, `SELECT secret_hash FROM home_credentials WHERE kind = $1 AND login = $2`, kind, login).Scan(&h)
	if errors.Is(err, sql.ErrNoRows) {
		return "", smarthome.ErrNotFound
	}
	return h, err
}

// Logins reads every login of a kind.
func (s *Store) Logins(ctx context.Context, kind string) ([]string, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT login FROM home_credentials WHERE kind = $1`, kind)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
