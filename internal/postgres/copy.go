package postgres

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// CopyFrom writes n rows into table's columns with COPY … FROM STDIN
// (binary), on a connection of pool opened by Open, and returns how many
// rows it wrote. row(i) returns row i's values in columns' order; the slice
// may be reused by the next call. The COPY is one statement outside any
// transaction, so it commits as a whole, before the call returns
// (synchronous_commit on: flushed), or writes nothing: a row that breaks a
// constraint fails it all, with PostgreSQL's error (a duplicate key's
// SQLSTATE 23505, which sqldb.IsUniqueViolation recognises).
//
// Why COPY. PostgreSQL inserts the rows of a COPY in batches per page
// (heap_multi_insert: one WAL record for the tuples sharing a page) and
// without an executor plan around each row, so a row costs its server less
// CPU than one of an INSERT … SELECT of arrays.
func CopyFrom(ctx context.Context, pool *sql.DB, table string, columns []string, n int, row func(i int) []any) (int64, error) {
	conn, err := pool.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	var written int64
	err = conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("copy into %s: not a PostgreSQL connection (%T)", table, dc)
		}
		var err error
		written, err = c.Conn().CopyFrom(ctx, pgx.Identifier{table}, columns, pgx.CopyFromSlice(n, func(i int) ([]any, error) {
			return row(i), nil
		}))
		return err
	})
	return written, err
}
