package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"testing/fstest"
)

// ErrNewerSchema is Migrate's answer for a database that already holds a
// migration of the domain newer than any this build has: a newer build
// migrated it, and an older build is stopped there rather than left to write
// rows the newer schema does not expect.
var ErrNewerSchema = errors.New("the database was migrated by a newer partnerapi build")

// Migrate applies the migrations of one domain that have not been applied
// yet. Files are named NNNN_description.sql and applied in order, each in its
// own transaction together with its bookkeeping row, so a crash never leaves
// a half-applied migration. Domains keep separate version sequences so the
// three APIs evolve their schemas independently. Several processes may start
// at once on one database: a version row that another process inserted first
// makes this one skip that migration. A migration only one engine needs, or
// that each engine spells its own way, is a pair of files
// NNNN_description.sqlite.sql and NNNN_description.postgres.sql sharing one
// version: each engine applies its own and skips the other's.
func (db *DB) Migrate(ctx context.Context, domain string, files fs.FS) error {
	err := db.Tx(ctx, func(tx *sql.Tx) error {
		if err := db.lockMigrations(ctx, tx); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		domain TEXT NOT NULL,
		version INTEGER NOT NULL,
		name TEXT NOT NULL,
		PRIMARY KEY (domain, version))`)
		return err
	})
	if err != nil {
		return fmt.Errorf("migrate %s: create bookkeeping table: %w", domain, err)
	}
	entries, err := fs.ReadDir(files, ".")
	if err != nil {
		return fmt.Errorf("migrate %s: %w", domain, err)
	}
	type migration struct {
		version int
		name    string
	}
	var list []migration
	for _, e := range entries {
		if e.IsDir() || path.Ext(e.Name()) != ".sql" || !db.ownMigration(e.Name()) {
			continue
		}
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return fmt.Errorf("migrate %s: file %q is not named NNNN_name.sql", domain, e.Name())
		}
		list = append(list, migration{v, e.Name()})
	}
	sort.Slice(list, func(i, j int) bool { return list[i].version < list[j].version })
	if len(list) > 0 {
		if err := db.refuseNewerSchema(ctx, domain, list[len(list)-1].version); err != nil {
			return err
		}
	}
	for _, m := range list {
		body, err := fs.ReadFile(files, m.name)
		if err != nil {
			return fmt.Errorf("migrate %s: %w", domain, err)
		}
		err = db.Tx(ctx, func(tx *sql.Tx) error {
			if err := db.lockMigrations(ctx, tx); err != nil {
				return err
			}
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE domain = $1 AND version = $2`, domain, m.version).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
			for _, stmt := range splitStatements(db.Rewrite(string(body))) {
				if _, err := tx.ExecContext(ctx, stmt); err != nil {
					return fmt.Errorf("%s: %w", m.name, err)
				}
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (domain, version, name) VALUES ($1, $2, $3)`, domain, m.version, m.name)
			return err
		})
		if err != nil {
			if IsUniqueViolation(err) {
				continue // another process applied it concurrently
			}
			return fmt.Errorf("migrate %s: %w", domain, err)
		}
	}
	return nil
}

// refuseNewerSchema answers ErrNewerSchema when the database holds a
// migration of domain above known, this build's latest. Without the check
// a downgrade (an older binary started on an upgraded database) starts as if
// nothing happened, and its writes leave out what the newer build's columns
// and tables are meant to hold.
func (db *DB) refuseNewerSchema(ctx context.Context, domain string, known int) error {
	var applied sql.NullInt64
	if err := db.W.QueryRowContext(ctx, `SELECT MAX(version) FROM schema_migrations WHERE domain = $1`, domain).Scan(&applied); err != nil {
		return fmt.Errorf("migrate %s: %w", domain, err)
	}
	if applied.Valid && int(applied.Int64) > known {
		return fmt.Errorf("migrate %s: %w (it is at migration %d, this build knows up to %d): run that build, or restore a backup taken before the upgrade",
			domain, ErrNewerSchema, applied.Int64, known)
	}
	return nil
}

// ownMigration reports whether the migration file name is for every engine
// or for db's own (NNNN_name.sqlite.sql, NNNN_name.postgres.sql).
func (db *DB) ownMigration(name string) bool {
	for _, d := range []Dialect{SQLite, Postgres} {
		if strings.HasSuffix(name, "."+string(d)+".sql") {
			return d == db.Dialect
		}
	}
	return true
}

// lockMigrations serialises concurrent migrators on PostgreSQL for the rest
// of tx; SQLite's IMMEDIATE transactions already hold the one write lock.
func (db *DB) lockMigrations(ctx context.Context, tx *sql.Tx) error {
	if db.Dialect != Postgres {
		return nil
	}
	_, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(7263001)`)
	return err
}

// splitStatements splits a migration on semicolons at the ends of lines; the
// migrations keep to one statement per semicolon-terminated block and use no
// procedural bodies, so this is enough and keeps both drivers happy (pgx's
// extended protocol refuses several statements in one Exec).
func splitStatements(s string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(s, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "--") {
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
		if strings.HasSuffix(trimmed, ";") {
			if stmt := strings.TrimSpace(cur.String()); stmt != ";" {
				out = append(out, strings.TrimSuffix(stmt, ";"))
			}
			cur.Reset()
		}
	}
	if stmt := strings.TrimSpace(cur.String()); stmt != "" {
		out = append(out, stmt)
	}
	return out
}

// MigrationsUpTo is the part of files up to version last, for tests that
// build a database as an earlier release left it, fill it, and then check
// what the later migrations do to its rows.
func MigrationsUpTo(files fs.FS, last int) (fs.FS, error) {
	out := fstest.MapFS{}
	entries, err := fs.ReadDir(files, ".")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		num, _, _ := strings.Cut(e.Name(), "_")
		if v, err := strconv.Atoi(num); err != nil || v > last {
			continue
		}
		body, err := fs.ReadFile(files, e.Name())
		if err != nil {
			return nil, err
		}
		out[e.Name()] = &fstest.MapFile{Data: body}
	}
	return out, nil
}
