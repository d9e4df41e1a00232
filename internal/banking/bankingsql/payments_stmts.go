package bankingsql

import (
	"context"
	"database/sql"
	"math/bits"
	"strconv"
	"strings"
	"sync"
	"time"

	"partnerapi/internal/sqldb"
)

// batchStatements builds the group commit's multi-row statements and, on
// SQLite, keeps them prepared on the writer connection. The SQLite driver
// parses and plans the SQL text of every unprepared call, and for a
// statement of a few hundred rows that cost as much as running it; so on
// SQLite a batch is cut into statements of power-of-two row counts (at most
// nine shapes per table, each prepared once for the life of the store) that
// every batch reuses. The writer pool has one connection, which the batch's
// own transaction holds, so a new shape runs unprepared in the batch that
// first needs it and is prepared by a goroutine that waits for the
// connection to be free. PostgreSQL's driver caches statements per connection
// by text and each statement is a round trip there, so a batch stays one
// statement of up to postgresRowsPerStatement rows.
type batchStatements struct {
	db *sqldb.DB
	m  sync.Map // batchKey → *batchStatement
}

// batchShape is one table's INSERT: the text before the VALUES rows, the
// text after them and the number of values per row.
type batchShape struct {
	head, tail string
	width      int
}

type batchKey struct {
	head string
	rows int
}

// batchStatement is one shape at one row count: its text and, on SQLite,
// the statement prepared on the writer pool (tx.StmtContext reuses it on
// the writer's one connection).
type batchStatement struct {
	text     string
	prepared *sql.Stmt
}

const (
	// sqliteRowsPerStatement is the largest SQLite statement: 256 rows of
	// at most 12 values stay far below its 32 766 bind parameters.
	sqliteRowsPerStatement = 256
	// postgresRowsPerStatement bounds a PostgreSQL statement's bind
	// parameters (65 535) whatever the batch holds.
	postgresRowsPerStatement = 500
)

// rowsPerStatement is how many of n remaining rows the next statement takes.
func (c *batchStatements) rowsPerStatement(n int) int {
	if c.db.Dialect != sqldb.SQLite {
		return min(n, postgresRowsPerStatement)
	}
	return 1 << (bits.Len(uint(min(n, sqliteRowsPerStatement))) - 1)
}

// get returns the statement of shape with rows rows, building it on first
// use; on SQLite its prepared form arrives with a later batch (prepare).
func (c *batchStatements) get(shape batchShape, rows int) *batchStatement {
	key := batchKey{shape.head, rows}
	if st, ok := c.m.Load(key); ok {
		return st.(*batchStatement)
	}
	var b strings.Builder
	b.WriteString(shape.head)
	for i := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		writePlaceholders(&b, c.db.Dialect, i*shape.width, shape.width)
	}
	b.WriteString(shape.tail)
	st := &batchStatement{text: b.String()}
	if prev, loaded := c.m.LoadOrStore(key, st); loaded {
		return prev.(*batchStatement)
	}
	if c.db.Dialect == sqldb.SQLite {
		go c.prepare(key, st.text)
	}
	return st
}

// prepare prepares text on the writer pool once its connection is free and
// publishes it under key. A failed prepare (the store closing, say) drops
// the key, so a later batch builds the shape again and retries.
func (c *batchStatements) prepare(key batchKey, text string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	prepared, err := c.db.W.PrepareContext(ctx, text)
	if err != nil {
		c.m.Delete(key)
		return
	}
	c.m.Store(key, &batchStatement{text: text, prepared: prepared})
}

// writePlaceholders writes "($n+1,…,$n+k)" for PostgreSQL and "(?,…,?)"
// for SQLite: SQLite treats "$n" as a named parameter and resolves each name
// by a linear search, which makes a statement of thousands of parameters
// quadratic to prepare and bind; "?" is positional and costs nothing.
func writePlaceholders(b *strings.Builder, dialect sqldb.Dialect, n, k int) {
	b.WriteByte('(')
	for j := 1; j <= k; j++ {
		if j > 1 {
			b.WriteByte(',')
		}
		if dialect == sqldb.SQLite {
			b.WriteByte('?')
			continue
		}
		b.WriteByte('$')
		b.WriteString(strconv.Itoa(n + j))
	}
	b.WriteByte(')')
}
