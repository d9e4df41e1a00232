package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"partnerapi/internal/postgres"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/sqlite"
)

// floorTarget is the durable floor of a create: a bare net/http handler that
// reads the request body and writes it, under a fresh key, as one row of a
// two-column table through the same group commit the payment store uses
// (one committer on SQLite, fsynced before the answer; a single statement
// of arrays on PostgreSQL; the same commit delay for announced callers),
// answering 201 with the bare handler's body only after its commit. It has
// none of the API: no token, no validation, digest, stored JSON or status
// walk, no middleware, and a 28-byte answer instead of the document.
//
// Its ratio to the bare handler is what durability alone costs on this
// machine with that database and net/http: the full stack cannot come nearer
// to the bare handler than the floor does, so the gap between the floor and
// the full stack is the part our own code could still win, and the gap
// between the floor and 1 is the database's.
type floorTarget struct {
	name   string
	open   func(context.Context) (*sqldb.DB, error)
	db     *sqldb.DB
	gc     *sqldb.GroupCommit[floorRow]
	stmts  map[int]*sql.Stmt // SQLite: the insert of n rows, prepared on the writer
	url    string
	halt   func()
	client *rawClient

	seq     atomic.Int64
	acked   atomic.Int64
	stopped bool
}

type floorRow struct {
	id   string
	body []byte
}

const floorTable = `CREATE TABLE IF NOT EXISTS bench_floor (id TEXT PRIMARY KEY, body TEXT NOT NULL)`

// newFloorTargets returns the floors of the stores the run measures: SQLite
// in a directory of its own (so a --data-dir store is never written to) and,
// with pgURL, PostgreSQL in the run's schema.
func newFloorTargets(sqliteDir, pgURL string) []*floorTarget {
	floors := []*floorTarget{{name: "floor-sqlite", open: func(ctx context.Context) (*sqldb.DB, error) { return sqlite.Open(ctx, sqliteDir) }}}
	if pgURL != "" {
		floors = append(floors, &floorTarget{name: "floor-postgres", open: func(ctx context.Context) (*sqldb.DB, error) { return postgres.Open(ctx, pgURL) }})
	}
	return floors
}

func (f *floorTarget) start(ctx context.Context, commitDelay time.Duration) error {
	db, err := f.open(ctx)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	f.db = db
	if _, err := db.W.ExecContext(ctx, floorTable); err != nil {
		return err
	}
	key := func(r floorRow) string { return r.id }
	if db.Dialect == sqldb.Postgres {
		f.gc = sqldb.NewGroupCommit(db, 0, key, nil).WithSingleStatement(f.writePostgres)
	} else {
		// Statements of power-of-two row counts, prepared once, as the
		// payment store keeps them: an unprepared multi-row INSERT costs
		// SQLite as much to parse and plan as to run.
		f.stmts = map[int]*sql.Stmt{}
		for n := 1; n <= 256; n *= 2 {
			text := "INSERT INTO bench_floor (id, body) VALUES " + strings.TrimSuffix(strings.Repeat("(?, ?),", n), ",")
			st, err := db.W.PrepareContext(ctx, text)
			if err != nil {
				return err
			}
			f.stmts[n] = st
		}
		f.gc = sqldb.NewGroupCommit(db, 0, key, f.writeSQLite)
	}
	f.gc.WithCommitDelay(commitDelay)
	base, stop, err := serveLoopbackLabelled(http.HandlerFunc(f.serve), f.name)
	if err != nil {
		return err
	}
	f.url, f.halt = base, stop
	return nil
}

// serve is the floor's whole handler: announce, read, commit, answer.
func (f *floorTarget) serve(w http.ResponseWriter, r *http.Request) {
	ctx, settle := f.gc.Expect(r.Context())
	defer settle.Release()
	body, err := io.ReadAll(r.Body)
	if err == nil {
		err = f.gc.Submit(ctx, floorRow{id: strconv.FormatInt(f.seq.Add(1), 10), body: body})
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	f.acked.Add(1)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_, _ = w.Write([]byte(`{"bankStatus":"IMPLEMENTED"}`))
}

func (f *floorTarget) writeSQLite(ctx context.Context, tx *sql.Tx, rows []floorRow) ([]error, error) {
	outcomes := make([]error, len(rows)) // keys are fresh: no row is refused
	args := make([]any, 0, 2*min(len(rows), 256))
	for len(rows) > 0 {
		n := 1
		for n*2 <= min(len(rows), 256) {
			n *= 2
		}
		args = args[:0]
		for _, r := range rows[:n] {
			args = append(args, r.id, r.body)
		}
		if _, err := tx.StmtContext(ctx, f.stmts[n]).ExecContext(ctx, args...); err != nil {
			return nil, err
		}
		rows = rows[n:]
	}
	return outcomes, nil
}

func (f *floorTarget) writePostgres(ctx context.Context, pool *sql.DB, rows []floorRow) ([]error, error) {
	ids, bodies := make([]string, len(rows)), make([]string, len(rows))
	for i, r := range rows {
		ids[i], bodies[i] = r.id, string(r.body)
	}
	if _, err := pool.ExecContext(ctx, `INSERT INTO bench_floor (id, body) SELECT * FROM unnest($1::text[], $2::text[])`, ids, bodies); err != nil {
		return nil, err
	}
	return make([]error, len(rows)), nil
}

// stop closes the listener and the store (idempotent).
func (f *floorTarget) stop() {
	if f.stopped || f.db == nil {
		return
	}
	f.stopped = true
	if f.halt != nil {
		f.halt()
	}
	for _, st := range f.stmts {
		_ = st.Close()
	}
	_ = f.db.Close()
}

// verify reopens the store and counts the floor's rows: every 201 the
// floor answered must be there, as for the full stack.
func (f *floorTarget) verify(ctx context.Context) (int64, error) {
	db, err := f.open(ctx)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var n int64
	err = db.R.QueryRowContext(ctx, `SELECT count(*) FROM bench_floor`).Scan(&n)
	return n, err
}

// floorDir is a directory of its own for the SQLite floor.
func floorDir() (string, func(), error) {
	dir, err := os.MkdirTemp("", "partnerapi-bench-floor-")
	if err != nil {
		return "", nil, err
	}
	return dir, func() { _ = os.RemoveAll(dir) }, nil
}
