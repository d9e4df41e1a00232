package sqldb

import (
	"context"
	"database/sql"
)

// QueryRowContext runs a read through the reader pool with the statement
// prepared once and reused. The SQLite driver parses the SQL text on every
// unprepared call, and on the hot read paths (token lookup, a document's
// state) that parse cost more than the lookup itself. PostgreSQL's driver
// already caches statements per connection, so there the call goes straight
// to the pool.
func (db *DB) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := db.readStmt(ctx, query)
	if err != nil || st == nil {
		// database/sql cannot build a *sql.Row holding an error, so a failed
		// prepare falls back to the plain call, which reports the same
		// failure through Scan.
		return db.R.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

// QueryContext is QueryRowContext for reads returning many rows.
func (db *DB) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := db.readStmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return db.R.QueryContext(ctx, query, args...)
	}
	return st.QueryContext(ctx, args...)
}

// readStmt returns the cached statement for query, preparing it on first
// use; nil means "do not prepare" (PostgreSQL). A failed prepare is not
// cached, so a statement over a table that a migration creates later works
// once the table exists.
func (db *DB) readStmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if db.Dialect != SQLite {
		return nil, nil
	}
	if st, ok := db.stmts.Load(query); ok {
		return st.(*sql.Stmt), nil
	}
	st, err := db.R.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if prev, loaded := db.stmts.LoadOrStore(query, st); loaded {
		_ = st.Close()
		return prev.(*sql.Stmt), nil
	}
	return st, nil
}

// closeStmts closes the cached statements (Close calls it).
func (db *DB) closeStmts() {
	db.stmts.Range(func(k, v any) bool {
		_ = v.(*sql.Stmt).Close()
		db.stmts.Delete(k)
		return true
	})
}
