package sqldb_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"

	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// sqliteCode is an error with SQLite's Code() int, for the codes no test
// here can provoke for real (SQLITE_LOCKED needs shared-cache mode).
type sqliteCode int

func (c sqliteCode) Error() string { return fmt.Sprintf("sqlite code %d", int(c)) }
func (c sqliteCode) Code() int     { return int(c) }

// Unavailable is told the errors of really failing operations: a connect
// to a closed port, a server that drops the connection, SQLite busy under
// a held write lock and full at its page limit, and with PostgreSQL
// configured a session the server terminates (57P01) and a transaction's
// connection cut; the SQLSTATEs a stopping or full PostgreSQL sends are
// made by type. What the server or the client got
// wrong over a working connection, and the caller's own cancellation, are
// not unavailable.
func TestUnavailable(t *testing.T) {
	ctx := context.Background()
	refused := storetest.UnavailableError(t)
	if strings.Contains(refused.Error(), storetest.DeadPassword) {
		t.Errorf("the connect error shows the URL's password: %v", refused)
	}
	busy, constraint := sqliteBusy(t)
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"pgx connect refused", refused, true},
		{"pgx connect refused, wrapped", fmt.Errorf("authenticate: %w", refused), true},
		{"pgx connection dropped by the server", droppedConnection(t), true},
		{"sqlite busy past busy_timeout", busy, true},
		{"sqlite full", sqliteFull(t), true},
		{"sqlite locked", fmt.Errorf("save: %w", sqliteCode(6)), true},
		{"sqlite busy snapshot", sqliteCode(517), true},
		{"57P01 admin_shutdown", &pgconn.PgError{Severity: "FATAL", Code: "57P01"}, true},
		{"57P02 crash_shutdown", &pgconn.PgError{Severity: "FATAL", Code: "57P02"}, true},
		{"57P03 cannot_connect_now", fmt.Errorf("begin: %w", &pgconn.PgError{Severity: "FATAL", Code: "57P03"}), true},
		{"53300 too_many_connections", &pgconn.PgError{Severity: "FATAL", Code: "53300"}, true},
		{"08006 connection_failure", &pgconn.PgError{Code: "08006"}, true},
		{"08P01 protocol_violation", &pgconn.PgError{Code: "08P01"}, true},
		{"ECONNRESET", fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{"ECONNREFUSED", fmt.Errorf("dial: %w", syscall.ECONNREFUSED), true},
		{"unexpected EOF", fmt.Errorf("receive message: %w", io.ErrUnexpectedEOF), true},
		{"bad connection", fmt.Errorf("insert: %w", driver.ErrBadConn), true},

		{"nil", nil, false},
		{"no rows", sql.ErrNoRows, false},
		{"sqlite unique constraint", constraint, false},
		{"sqlite constraint by code", sqliteCode(19), false},
		{"23505 unique_violation", &pgconn.PgError{Code: "23505"}, false},
		{"42P01 undefined_table", &pgconn.PgError{Code: "42P01"}, false},
		{"28P01 invalid_password", &pgconn.PgError{Severity: "FATAL", Code: "28P01"}, false},
		{"57014 query_canceled", &pgconn.PgError{Code: "57014"}, false},
		{"context canceled", fmt.Errorf("query: %w", context.Canceled), false},
		{"deadline exceeded", context.DeadlineExceeded, false},
		{"database closed", sql.ErrConnDone, false},
		{"plain", errors.New("boom"), false},
	}
	if os.Getenv(storetest.EnvPostgres) != "" {
		cases = append(cases, struct {
			name string
			err  error
			want bool
		}{"postgres session terminated", terminated(t, ctx), true}, struct {
			name string
			err  error
			want bool
		}{"postgres connection cut in a transaction", cutInTransaction(t, ctx), true})
	}
	for _, c := range cases {
		t.Logf("%s: %T %v", c.name, c.err, c.err)
		if got := sqldb.Unavailable(c.err); got != c.want {
			t.Errorf("%s: Unavailable(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}

// sqliteBusy returns the error of an insert while another connection holds
// the write lock, with a busy timeout of 50 ms, and that of a real unique
// violation on the same table.
func sqliteBusy(t *testing.T) (busy, constraint error) {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "busy.db")
	open := func() *sql.DB {
		db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(50)")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	holder, writer := open(), open()
	if _, err := holder.ExecContext(ctx, "CREATE TABLE items (name TEXT PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	if _, err := writer.ExecContext(ctx, "INSERT INTO items VALUES ('a')"); err != nil {
		t.Fatal(err)
	}
	_, constraint = writer.ExecContext(ctx, "INSERT INTO items VALUES ('a')")
	if constraint == nil {
		t.Fatal("a duplicate key was inserted")
	}
	conn, err := holder.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(ctx, "ROLLBACK")
	_, busy = writer.ExecContext(ctx, "INSERT INTO items VALUES ('b')")
	if busy == nil {
		t.Fatal("an insert succeeded under another connection's write lock")
	}
	return busy, constraint
}

// sqliteFull returns the error of an insert past the database's page
// limit, which SQLite reports as it does a full disk (SQLITE_FULL).
func sqliteFull(t *testing.T) error {
	t.Helper()
	ctx := context.Background()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "full.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, "CREATE TABLE blobs (b BLOB)"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "PRAGMA max_page_count = 8"); err != nil {
		t.Fatal(err)
	}
	for range 100 {
		if _, err := db.ExecContext(ctx, "INSERT INTO blobs VALUES (zeroblob(4096))"); err != nil {
			return err
		}
	}
	t.Fatal("100 pages were written into a database of 8")
	return nil
}

// droppedConnection returns pgx's error when the server accepts the
// connection and closes it before answering, as a crashing server does.
func droppedConnection(t *testing.T) error {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgconn.Connect(ctx, "postgres://root@"+ln.Addr().String()+"/outage?sslmode=disable")
	if err == nil {
		conn.Close(ctx)
		t.Fatal("connected to a server that hangs up")
	}
	return err
}

// terminated returns the error of a query on a PostgreSQL session that
// another session ended with pg_terminate_backend, which the server reports
// as it does a shutdown (57P01); the server itself keeps running.
func terminated(t *testing.T, ctx context.Context) error {
	t.Helper()
	db := storetest.Postgres(t)
	conn, err := db.W.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var pid int
	if err := conn.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	other, err := db.W.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.ExecContext(ctx, "SELECT pg_terminate_backend($1)", pid); err != nil {
		t.Fatal(err)
	}
	var one int
	err = conn.QueryRowContext(ctx, "SELECT 1").Scan(&one)
	if err == nil {
		t.Fatal("a terminated session answered")
	}
	return err
}

// cutInTransaction returns the error of a statement in a transaction whose
// connection broke (closed under pgx, as a network failure or a killed
// server closes it): database/sql cannot retry it on another connection.
func cutInTransaction(t *testing.T, ctx context.Context) error {
	t.Helper()
	cfg, err := pgx.ParseConfig(os.Getenv(storetest.EnvPostgres))
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := new(net.Dialer).DialContext(ctx, network, addr)
		if err == nil {
			conns = append(conns, c)
		}
		return c, err
	}
	db := stdlib.OpenDB(*cfg)
	defer db.Close()
	db.SetMaxOpenConns(1)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for _, c := range conns {
		c.Close()
	}
	_, err = tx.ExecContext(ctx, "SELECT 1")
	if err == nil {
		t.Fatal("a statement ran on a closed connection")
	}
	return err
}
