package postgres

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/stdlib"
)

// Why COPY. PostgreSQL inserts the rows of a COPY in batches per page
// (heap_multi_insert: one WAL record for the tuples sharing a page) and
// without an executor plan around each row, so a row costs its server less
// CPU than one of an INSERT … SELECT of arrays.
//
// Why not pgx's CopyFrom. pgx.Conn.CopyFrom encodes the rows in a goroutine
// of its own that feeds an io.Pipe, and pgconn.PgConn.CopyFrom reads that
// pipe in a second goroutine and waits for the server's answers in a third
// (signalMessage), whatever reader it is given: three goroutines and their
// channels per batch, and pgx's encoding of each value through its type
// map. BenchmarkCopyBatch (bankingsql), 16 documents a batch under a
// deadline: 10–17 µs of our CPU a document and 183 allocations a batch
// through pgx, 5–6 µs and 14 here. Here the caller's
// goroutine encodes the whole exchange — the query, the rows as CopyData
// messages, and CopyDone — into one buffer reused from batch to batch,
// writes it in one write on the connection it holds alone (database/sql's
// Conn.Raw), and reads the answers through pgconn. Sending the rows before the server's CopyInResponse is
// what pgconn does too: a server that rejects the statement or a row
// answers with an ErrorResponse and drops the copy messages that follow
// (protocol, "COPY Operations"), and its answers (a few short messages) fit
// the socket's buffer, so the write cannot wait on a reply we have not read.
// The server reads a CopyData message whole before it parses a row of it,
// so a new message begins at the first row past 64 KiB, as pgx's are.

// CopyTable is the COPY … FROM STDIN (binary) of some columns of a table.
// It keeps the buffers its rows were encoded in for later batches.
type CopyTable struct {
	// query is the Query message that starts the COPY, encoded once.
	query   []byte
	columns int
	rows    sync.Pool // of *CopyRows
}

// NewCopyTable is the COPY of columns of table (names as written in the
// schema; they are quoted here).
func NewCopyTable(table string, columns ...string) *CopyTable {
	quoted := make([]string, len(columns))
	for i, c := range columns {
		quoted[i] = pgx.Identifier{c}.Sanitize()
	}
	sql := fmt.Sprintf("COPY %s (%s) FROM STDIN (FORMAT binary)", pgx.Identifier{table}.Sanitize(), strings.Join(quoted, ", "))
	query, err := (&pgproto3.Query{String: sql}).Encode(nil)
	if err != nil {
		// Only a message over 1 GiB fails to encode; a statement naming a
		// dozen columns never is one.
		panic(err)
	}
	return &CopyTable{query: query, columns: len(columns)}
}

// maxKeptCopyBuffer is the largest buffer kept for later batches: a rare
// batch of huge documents should not hold its memory for good.
const maxKeptCopyBuffer = 4 << 20

// Rows returns an empty set of rows of t to fill and pass to CopyFrom,
// which gives its buffer back to t.
func (t *CopyTable) Rows() *CopyRows {
	r, _ := t.rows.Get().(*CopyRows)
	if r == nil {
		r = &CopyRows{table: t}
	}
	r.buf = append(r.buf[:0], t.query...)
	r.openData()
	// The binary COPY header: signature, flags (no OIDs), no header
	// extension.
	r.buf = append(r.buf, "PGCOPY\n\377\r\n\000"...)
	r.buf = binary.BigEndian.AppendUint32(r.buf, 0)
	r.buf = binary.BigEndian.AppendUint32(r.buf, 0)
	r.n, r.fields, r.err = 0, t.columns, nil
	return r
}

// CopyRows are rows being encoded for one COPY of a CopyTable, in its
// binary format: after Row, one call of Text, Int8 or Null per column, in
// the table's order of columns. Each call's encoding must be the column's
// type's binary form (the server checks it and fails the COPY otherwise):
// Text for TEXT (UTF-8, the connection's client encoding), Int8 for BIGINT.
type CopyRows struct {
	table *CopyTable
	buf   []byte
	// data is the offset of the last CopyData message in buf.
	data int
	// n counts the rows begun, fields the values given for the last one.
	n, fields int
	err       error
}

// copyDataSize is the size past which the next row begins a new CopyData
// message.
const copyDataSize = 64 << 10

// Row begins the next row.
func (r *CopyRows) Row() {
	r.check()
	if len(r.buf)-r.data > copyDataSize {
		r.closeData()
		r.openData()
	}
	r.n++
	r.fields = 0
	r.buf = binary.BigEndian.AppendUint16(r.buf, uint16(r.table.columns))
}

// Text appends a TEXT value: the binary form of text is its bytes.
func (r *CopyRows) Text(s string) {
	if len(s) > math.MaxInt32 && r.err == nil {
		r.err = fmt.Errorf("copy: a text of %d bytes", len(s))
	}
	r.fields++
	r.buf = binary.BigEndian.AppendUint32(r.buf, uint32(len(s)))
	r.buf = append(r.buf, s...)
}

// Int8 appends a BIGINT value: eight bytes, most significant first.
func (r *CopyRows) Int8(v int64) {
	r.fields++
	r.buf = binary.BigEndian.AppendUint32(r.buf, 8)
	r.buf = binary.BigEndian.AppendUint64(r.buf, uint64(v))
}

// Null appends a NULL, a length of -1 without data.
func (r *CopyRows) Null() {
	r.fields++
	r.buf = binary.BigEndian.AppendUint32(r.buf, math.MaxUint32)
}

// check records a row whose count of values is not the table's columns: the
// server would reject the stream too, but with a message about bytes.
func (r *CopyRows) check() {
	if r.fields != r.table.columns && r.err == nil {
		r.err = fmt.Errorf("copy: row %d has %d of %d columns", r.n, r.fields, r.table.columns)
	}
}

// openData begins a CopyData message: 'd' and its length, set by
// closeData.
func (r *CopyRows) openData() {
	r.data = len(r.buf)
	r.buf = append(r.buf, 'd', 0, 0, 0, 0)
}

// closeData sets the length of the last CopyData message: the bytes after
// its type.
func (r *CopyRows) closeData() {
	binary.BigEndian.PutUint32(r.buf[r.data+1:], uint32(len(r.buf)-r.data-1))
}

// end closes the rows with the trailer (a field count of -1) and appends
// CopyDone.
func (r *CopyRows) end() {
	r.check()
	r.buf = binary.BigEndian.AppendUint16(r.buf, math.MaxUint16)
	r.closeData()
	r.buf = append(r.buf, 'c', 0, 0, 0, 4)
}

// release gives r's buffer back to its table.
func (r *CopyRows) release() {
	if cap(r.buf) <= maxKeptCopyBuffer {
		r.table.rows.Put(r)
	}
}

// CopyFrom writes rows with one COPY on a connection of pool opened by
// Open, and returns how many rows it wrote; rows must not be used after.
// The COPY is one statement outside any transaction, so it commits as a
// whole, before the call returns (synchronous_commit on: flushed), or
// writes nothing: a row that breaks a constraint fails it all, with
// PostgreSQL's error (a duplicate key's SQLSTATE 23505, which
// sqldb.IsUniqueViolation recognises). A connection left in an unknown
// state (a failed write or read, ctx ending mid-exchange) is closed, so the
// pool dials afresh.
func CopyFrom(ctx context.Context, pool *sql.DB, rows *CopyRows) (int64, error) {
	defer rows.release()
	rows.end()
	if rows.err != nil {
		return 0, rows.err
	}
	conn, err := pool.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	var written int64
	err = conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("copy: not a PostgreSQL connection (%T)", dc)
		}
		var err error
		written, err = copyOn(ctx, c.Conn().PgConn(), rows.buf)
		return err
	})
	return written, err
}

// copyOn sends the encoded exchange msgs on pc, an idle connection, and
// reads the answers up to ReadyForQuery, all under ctx. pgconn bounds each
// of its writes and reads by its caller's context, setting a deadline on
// the socket when the context ends; the whole exchange is bounded here the
// same way, with one watch instead of one per message read, since a server
// waiting for a lock on the table leaves the batch unread and its answer
// unsent.
func copyOn(ctx context.Context, pc *pgconn.PgConn, msgs []byte) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("copy: %w", err)
	}
	stop := func() bool { return true }
	if ctx.Done() != nil {
		nc := pc.Conn()
		stop = context.AfterFunc(ctx, func() { nc.SetDeadline(time.Now()) })
	}
	n, answered, err := exchange(pc, msgs)
	if answered {
		if !stop() {
			// The server's answer is whole, but the socket has or will
			// have a deadline set: the connection is not used again.
			abandon(pc)
		}
		return n, err
	}
	stop()
	abandon(pc)
	if ctx.Err() != nil {
		// As pgconn reports a write or read the context cut short.
		return 0, fmt.Errorf("copy: %w", ctx.Err())
	}
	return 0, err
}

// exchange writes msgs in one write and reads the server's answers;
// answered says whether it read them up to ReadyForQuery, err is then the
// server's error if any.
func exchange(pc *pgconn.PgConn, msgs []byte) (n int64, answered bool, err error) {
	// SendUnbufferedEncodedCopyData writes bytes already encoded as
	// messages, after any pgconn has buffered (none on an idle connection).
	if err := pc.Frontend().SendUnbufferedEncodedCopyData(msgs); err != nil {
		return 0, false, err
	}
	var tag pgconn.CommandTag
	var pgErr error
	for {
		// The context is watched by copyOn.
		msg, err := pc.ReceiveMessage(context.Background())
		if err != nil {
			return 0, false, err
		}
		// A message is valid only until the next one is read: the tag and
		// the error are copied out of it.
		switch msg := msg.(type) {
		case *pgproto3.CommandComplete:
			tag = pgconn.NewCommandTag(string(msg.CommandTag))
		case *pgproto3.ErrorResponse:
			pgErr = pgconn.ErrorResponseToPgError(msg)
		case *pgproto3.ReadyForQuery:
			return tag.RowsAffected(), true, pgErr
		}
		// CopyInResponse (the rows are already sent), notices and
		// parameter changes (pgconn has handled them) need nothing here.
	}
}

// abandon closes pc after a failure that left the exchange unfinished, so
// that database/sql drops it (stdlib reports a closed connection as bad)
// instead of handing it to the next query mid-COPY.
func abandon(pc *pgconn.PgConn) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	pc.Close(ctx)
}
