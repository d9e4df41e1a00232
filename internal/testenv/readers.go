package testenv

import (
	"context"
	"database/sql"
	"sync"
	"testing"
)

// HoldReaders takes n connections of the reader pool r (all of them, for a
// pool of n), each in an open read transaction, as reads that never end (a
// stalled disk, a query that hangs) would hold them: whatever reads through
// r next waits for a connection. It returns the function that gives them
// back, which a test may call more than once (before a check and again in
// a deferred call), the later calls doing nothing.
func HoldReaders(t testing.TB, r *sql.DB, n int) (release func()) {
	t.Helper()
	ctx := context.Background()
	var conns []*sql.Conn
	for range n {
		c, err := r.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// sqlite_schema is in every SQLite database: the read transaction
		// holds its connection whatever tables the test's store has.
		if _, err := c.ExecContext(ctx, "BEGIN; SELECT count(*) FROM sqlite_schema"); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			for _, c := range conns {
				_, _ = c.ExecContext(ctx, "ROLLBACK")
				c.Close()
			}
		})
	}
}
