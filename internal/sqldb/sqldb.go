// Package sqldb is the database/sql layer shared by the SQLite and PostgreSQL
// stores. Every domain store (banking, assistant, smart home) is written once
// against it, in SQL both engines accept: `$1` placeholders (SQLite reads them
// as positional), ON CONFLICT, RETURNING, integers for times and booleans.
// The few differences (byte columns, auto ids) are spelled as {{bytes}} and
// {{autoid}} in migrations and rewritten for the dialect.
package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
)

// Dialect names the engine behind a DB.
type Dialect string

const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// DB holds a writer pool and a reader pool. SQLite allows one writer at a
// time, so its writer pool has exactly one connection and begins
// transactions IMMEDIATE; readers run concurrently under WAL. For PostgreSQL
// both fields are the same pool.
type DB struct {
	Dialect Dialect
	W       *sql.DB
	R       *sql.DB

	// BeforeClose, when set, runs first in Close: an engine's background
	// work on the pools (SQLite's checkpointer) stops before they close.
	BeforeClose func()
	// Checkpoints is what SQLite's checkpointer saw; nil for PostgreSQL.
	Checkpoints *CheckpointStats

	stmts  sync.Map      // SQL text → *sql.Stmt prepared on R (stmtcache.go)
	groups groupCounters // what the group commits on this DB did (groupcommit.go)
}

// Close closes both pools.
func (db *DB) Close() error {
	if db.BeforeClose != nil {
		db.BeforeClose()
	}
	db.closeStmts()
	err := db.W.Close()
	if db.R != db.W {
		err = errors.Join(err, db.R.Close())
	}
	return err
}

// Ping checks that the database answers; /healthz uses it.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.R.PingContext(ctx); err != nil {
		return err
	}
	var one int
	return db.R.QueryRowContext(ctx, "SELECT 1").Scan(&one)
}

// Tx runs fn in a write transaction and commits it, or rolls back when fn
// returns an error or panics. Nothing fn wrote is visible unless it returns nil.
func (db *DB) Tx(ctx context.Context, fn func(tx *sql.Tx) error) (err error) {
	tx, err := db.W.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	return runTx(tx, fn)
}

// runTx runs fn in tx and commits it, or rolls back when fn returns an
// error or panics.
func runTx(tx *sql.Tx, fn func(tx *sql.Tx) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			_ = tx.Rollback()
			panic(p)
		}
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	if err = fn(tx); err != nil {
		return err
	}
	if err = tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// txUninterrupted is Tx whose ctx bounds only the wait for a writer
// connection: the transaction itself runs under ctx without its deadline or
// cancellation. The SQLite driver starts a goroutine and sets a progress
// handler for every statement run under a context that can end, to
// interrupt it; a group commit's batch pays that for its BEGIN, every
// INSERT and its COMMIT, while on SQLite the only waits inside a
// transaction are for locks, which busy_timeout bounds anyway.
func (db *DB) txUninterrupted(ctx context.Context, fn func(tx *sql.Tx) error) (err error) {
	conn, err := db.W.Conn(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer conn.Close()
	tx, err := conn.BeginTx(context.WithoutCancel(ctx), nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	return runTx(tx, fn)
}

// Rewrite turns the dialect-neutral spellings of a migration into the
// dialect's own.
func (db *DB) Rewrite(ddl string) string {
	r := strings.NewReplacer(
		"{{bytes}}", map[Dialect]string{SQLite: "BLOB", Postgres: "BYTEA"}[db.Dialect],
		"{{autoid}}", map[Dialect]string{SQLite: "INTEGER PRIMARY KEY AUTOINCREMENT", Postgres: "BIGSERIAL PRIMARY KEY"}[db.Dialect],
	)
	return r.Replace(ddl)
}

// IsUniqueViolation reports whether err is a unique-constraint violation in
// either engine, so stores can turn it into their domain's "duplicate" error.
func IsUniqueViolation(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "UNIQUE constraint failed") || // SQLite
		strings.Contains(msg, "SQLSTATE 23505") || // PostgreSQL via pgx
		strings.Contains(msg, "duplicate key value violates unique constraint")
}

// CheckpointStats is what SQLite's checkpointer saw, for /metrics: a WAL
// that only grows (checkpoints that fail, or a reader that never lets one
// finish) fills the disk with no other sign until writes fail.
type CheckpointStats struct {
	// WALFrames is the WAL's size in frames (pages) at the last checkpoint.
	WALFrames atomic.Int64
	// Failures counts checkpoints that failed.
	Failures atomic.Int64
}
