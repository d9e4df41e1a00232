package postgres_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"partnerapi/internal/postgres"
	"partnerapi/internal/storetest"
)

// copyRow is a row of the test table copy_t: a key, a text, a BIGINT and a
// nullable BIGINT.
type copyRow struct {
	k    int64
	s    string
	n    int64
	null *int64
}

func (r copyRow) String() string {
	null := "NULL"
	if r.null != nil {
		null = fmt.Sprint(*r.null)
	}
	return fmt.Sprintf("%d %q %d %s", r.k, r.s, r.n, null)
}

var copyT = postgres.NewCopyTable("copy_t", "k", "s", "n", "null")

func copyDB(t *testing.T) *sql.DB {
	t.Helper()
	db := storetest.Postgres(t)
	if _, err := db.W.Exec(`CREATE TABLE copy_t (k BIGINT PRIMARY KEY, s TEXT NOT NULL, n BIGINT NOT NULL, "null" BIGINT)`); err != nil {
		t.Fatal(err)
	}
	return db.W
}

func copyRows(rows []copyRow) *postgres.CopyRows {
	out := copyT.Rows()
	for _, r := range rows {
		out.Row()
		out.Int8(r.k)
		out.Text(r.s)
		out.Int8(r.n)
		if r.null != nil {
			out.Int8(*r.null)
		} else {
			out.Null()
		}
	}
	return out
}

func readCopyT(t *testing.T, db *sql.DB) []copyRow {
	t.Helper()
	rs, err := db.Query(`SELECT k, s, n, "null" FROM copy_t ORDER BY k`)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	var out []copyRow
	for rs.Next() {
		var r copyRow
		var null sql.NullInt64
		if err := rs.Scan(&r.k, &r.s, &r.n, &null); err != nil {
			t.Fatal(err)
		}
		if null.Valid {
			r.null = &null.Int64
		}
		out = append(out, r)
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func ptr(v int64) *int64 { return &v }

// Every value round-trips through the binary COPY: texts of any length and
// script, BIGINT's extremes, NULL and its absence; a batch of rows comes
// back as it was sent, and the rows are counted.
func TestCopyFromRoundTrip(t *testing.T) {
	big := strings.Repeat("Ж€😀", 600_000) // 5.4 MB: more than a socket's buffer and than the kept buffer
	cases := []struct {
		name string
		rows []copyRow
	}{
		// Rows are sent in the order of k, which they are read back in.
		{"empty batch", nil},
		{"one row", []copyRow{{1, "a", 2, ptr(3)}}},
		{"empty text and NULL", []copyRow{{1, "", 0, nil}}},
		{"extremes", []copyRow{{math.MinInt64, "min", math.MinInt64, ptr(math.MinInt64)}, {-1, "минус", -1, ptr(0)}, {math.MaxInt64, "max", math.MaxInt64, ptr(math.MaxInt64)}}},
		{"unicode", []copyRow{{1, "Оплата по счёту № 7 — «Ромашка» ✓ 😀 e\u0301", 1, nil}, {2, "\t\n\\ \" ' \r", 2, nil}}},
		{"large text", []copyRow{{1, big, 1, nil}, {2, "after", 2, ptr(2)}}},
		{"many rows", func() []copyRow {
			rows := make([]copyRow, 5000) // some 240 KiB: several CopyData messages
			for i := range rows {
				rows[i] = copyRow{int64(i), fmt.Sprint("row ", i), int64(i) * 1_000_003, nil}
				if i%3 == 0 {
					rows[i].null = ptr(-int64(i))
				}
			}
			return rows
		}()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db := copyDB(t)
			n, err := postgres.CopyFrom(context.Background(), db, copyRows(c.rows))
			if err != nil {
				t.Fatal(err)
			}
			if n != int64(len(c.rows)) {
				t.Errorf("copied %d of %d rows", n, len(c.rows))
			}
			got := readCopyT(t, db)
			if len(got) != len(c.rows) {
				t.Fatalf("%d rows stored, %d sent", len(got), len(c.rows))
			}
			want := append([]copyRow(nil), c.rows...)
			for i := range want {
				if got[i].String() != want[i].String() {
					// Long texts are compared whole but printed short.
					t.Errorf("row %d: got %.200s, want %.200s", i, got[i], want[i])
				}
			}
		})
	}
}

// A row with too few or too many values fails before anything is sent.
func TestCopyFromRowShape(t *testing.T) {
	db := copyDB(t)
	for _, fill := range []func(r *postgres.CopyRows){
		func(r *postgres.CopyRows) { r.Row(); r.Int8(1); r.Text("short") },
		func(r *postgres.CopyRows) {
			r.Row()
			r.Int8(1)
			r.Text("a")
			r.Int8(1)
			r.Null()
			r.Null()
		},
		func(r *postgres.CopyRows) {
			r.Row()
			r.Int8(1)
			r.Row()
			r.Int8(2)
			r.Text("b")
			r.Int8(2)
			r.Null()
		},
	} {
		rows := copyT.Rows()
		fill(rows)
		if _, err := postgres.CopyFrom(context.Background(), db, rows); err == nil || !strings.Contains(err.Error(), "columns") {
			t.Errorf("error %v", err)
		}
	}
	if got := readCopyT(t, db); len(got) != 0 {
		t.Errorf("stored %v", got)
	}
}

// A COPY the server rejects — a key taken, a text PostgreSQL cannot store,
// a statement naming what is not there — answers the server's error, writes
// no row of the batch, and leaves its connection ready for the next
// statement: one connection serves them all in turn.
func TestCopyFromServerError(t *testing.T) {
	db := copyDB(t)
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	if _, err := postgres.CopyFrom(ctx, db, copyRows([]copyRow{{1, "first", 1, nil}})); err != nil {
		t.Fatal(err)
	}
	missing := postgres.NewCopyTable("copy_missing", "k")
	cases := []struct {
		name  string
		rows  *postgres.CopyRows
		state string
	}{
		{"key taken", copyRows([]copyRow{{2, "new", 2, nil}, {1, "again", 1, nil}, {3, strings.Repeat("x", 1<<20), 3, nil}}), "23505"},
		{"NUL in a text", copyRows([]copyRow{{4, "a\x00b", 4, nil}}), "22021"},
		{"invalid UTF-8", copyRows([]copyRow{{5, "\xff", 5, nil}}), "22021"},
		{"no such table", func() *postgres.CopyRows { r := missing.Rows(); r.Row(); r.Int8(1); return r }(), "42P01"},
	}
	for _, c := range cases {
		_, err := postgres.CopyFrom(ctx, db, c.rows)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != c.state {
			t.Errorf("%s: error %v, want SQLSTATE %s", c.name, err, c.state)
		}
		if got := readCopyT(t, db); len(got) != 1 || got[0].s != "first" {
			t.Fatalf("%s: rows %v", c.name, got)
		}
	}
	if _, err := postgres.CopyFrom(ctx, db, copyRows([]copyRow{{9, "last", 9, nil}})); err != nil {
		t.Fatal(err)
	}
	if got := readCopyT(t, db); len(got) != 2 {
		t.Errorf("rows %v", got)
	}
}

// A COPY whose server waits — on another transaction's lock of the table
// before it reads the rows, or on its insert of the same key after it read
// them — ends with its context, whether it is still writing the batch (one
// larger than the socket's buffers) or waiting for the answer: the error
// is the context's, and the connection is dropped, not handed to the next
// statement mid-COPY (the pool's only other connection is held, so the next
// statement would get it). Nothing of the batch is stored.
func TestCopyFromDeadlineWhileBlocked(t *testing.T) {
	cases := []struct {
		name string
		// lock is what the other transaction does besides inserting the
		// key 1.
		lock string
		// large is the count of rows of 1 MiB after the blocked one.
		large int
	}{
		{"waiting for the answer", "", 0},
		// 64 MiB: more than loopback's socket buffers hold (tcp_rmem's
		// ceiling is 32 MiB on the test hosts), so the write itself waits.
		{"writing", "LOCK TABLE copy_t IN ACCESS EXCLUSIVE MODE", 64},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db := copyDB(t)
			db.SetMaxOpenConns(2)
			ctx := context.Background()
			other, err := db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer other.Rollback()
			if _, err := other.Exec(`INSERT INTO copy_t VALUES (1, 'other', 1, NULL)`); err != nil {
				t.Fatal(err)
			}
			if c.lock != "" {
				if _, err := other.Exec(c.lock); err != nil {
					t.Fatal(err)
				}
			}
			rows := []copyRow{{1, "blocked", 1, nil}}
			for i := range c.large {
				rows = append(rows, copyRow{int64(i) + 2, strings.Repeat("z", 1<<20), 0, nil})
			}
			encoded := copyRows(rows)
			dctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, err = postgres.CopyFrom(dctx, db, encoded)
			if !errors.Is(err, context.DeadlineExceeded) || !strings.HasPrefix(err.Error(), "copy: ") {
				t.Errorf("error %v, want the deadline", err)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("returned after %v", d)
			}
			var one int
			if err := db.QueryRow(`SELECT 1`).Scan(&one); err != nil {
				t.Fatalf("next statement: %v", err)
			}
			if err := other.Commit(); err != nil {
				t.Fatal(err)
			}
			got := readCopyT(t, db)
			if len(got) != 1 || got[0].s != "other" {
				t.Errorf("rows %v", got)
			}
		})
	}
}
