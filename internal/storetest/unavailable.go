package storetest

import (
	"context"
	"database/sql"
	"net"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
)

// DeadPassword is the password in DeadPostgresURL: a test that logs the
// errors of such a database checks that it appears nowhere.
const DeadPassword = "s3cret-never-logged"

// DeadPostgresURL returns the URL of a PostgreSQL server that is not
// there: a loopback port that was just free, with a user, a password and a
// database named as in a deployment's URL.
func DeadPostgresURL(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "postgres://root:" + DeadPassword + "@" + addr + "/outage?sslmode=disable&connect_timeout=2"
}

// DeadPostgres opens a database/sql pool on DeadPostgresURL: every query
// on it fails as queries fail while the real server is down.
func DeadPostgres(t testing.TB) *sql.DB {
	t.Helper()
	pool, err := sql.Open("pgx", DeadPostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close() })
	return pool
}

// UnavailableError returns the error a real query gives while PostgreSQL
// is down (pgx's "failed to connect … connection refused"), for tests that
// inject an outage at a store's boundary: a store returning it is what the
// transports must answer as "unavailable".
func UnavailableError(t testing.TB) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var one int
	err := DeadPostgres(t).QueryRowContext(ctx, "SELECT 1").Scan(&one)
	if err == nil {
		t.Fatal("a query on a closed port succeeded")
	}
	return err
}
