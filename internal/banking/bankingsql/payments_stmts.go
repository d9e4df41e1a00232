package bankingsql

import (
	"context"
	"database/sql"
	"math/bits"
	"strings"
	"sync"
	"time"

	"partnerapi/internal/sqldb"
)

// batchStatements builds SQLite's multi-row statements for the group commit
// and keeps them prepared on the writer connection. The SQLite driver
// parses and plans the SQL text of every unprepared call, and for a
// statement of a few hundred rows that cost as much as running it; so a
// batch is cut into statements of power-of-two row counts (at most nine
// shapes per table, each prepared once for the life of the store) that
// every batch reuses. The writer pool has one connection, which the batch's
// own transaction holds, so a new shape runs unprepared in the batch that
// first needs it and is prepared by a goroutine that waits for the
// connection to be free. PostgreSQL writes a batch as one statement of
// arrays instead (payments_batch_pg.go).
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
	head, tail string
	rows       int
}

// batchStatement is one shape at one row count: its text and, on SQLite,
// the statement prepared on the writer pool (tx.StmtContext reuses it on
// the writer's one connection), nil until it is.
type batchStatement struct {
	text     string
	prepared *sql.Stmt
}

// maxRowsPerStatement is the largest statement: 256 rows of at most 12
// values stay far below SQLite's 32 766 bind parameters.
const maxRowsPerStatement = 256

// rowsPerStatement is how many of n remaining rows the next statement takes.
func rowsPerStatement(n int) int {
	return 1 << (bits.Len(uint(min(n, maxRowsPerStatement))) - 1)
}

// get returns the statement of shape with rows rows, building it on first
// use; its prepared form arrives with a later batch (prepare).
func (c *batchStatements) get(shape batchShape, rows int) *batchStatement {
	key := batchKey{shape.head, shape.tail, rows}
	if st, ok := c.m.Load(key); ok {
		return st.(*batchStatement)
	}
	var b strings.Builder
	b.WriteString(shape.head)
	for i := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		writePlaceholders(&b, shape.width)
	}
	b.WriteString(shape.tail)
	st := &batchStatement{text: b.String()}
	if prev, loaded := c.m.LoadOrStore(key, st); loaded {
		return prev.(*batchStatement)
	}
	go c.prepare(key, st.text)
	return st
}

// fixed returns the statement of a text without rows (a savepoint's),
// kept and prepared as the shapes are; its key has no rows, which no
// shape's has.
func (c *batchStatements) fixed(text string) *batchStatement {
	key := batchKey{head: text}
	if st, ok := c.m.Load(key); ok {
		return st.(*batchStatement)
	}
	st := &batchStatement{text: text}
	if prev, loaded := c.m.LoadOrStore(key, st); loaded {
		return prev.(*batchStatement)
	}
	go c.prepare(key, text)
	return st
}

// exec runs the statement, without arguments, in tx: prepared once it is.
func (st *batchStatement) exec(ctx context.Context, tx *sql.Tx) error {
	var err error
	if st.prepared != nil {
		_, err = tx.StmtContext(ctx, st.prepared).ExecContext(ctx)
	} else {
		_, err = tx.ExecContext(ctx, st.text)
	}
	return err
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

// writePlaceholders writes "(?,…,?)" with k placeholders: positional
// parameters, because SQLite resolves each named one ("$n") by a linear
// search, which makes a statement of thousands of parameters quadratic to
// prepare and bind.
func writePlaceholders(b *strings.Builder, k int) {
	b.WriteByte('(')
	for j := range k {
		if j > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('?')
	}
	b.WriteByte(')')
}
