// Package storetest gives conformance suites the databases to run against:
// a fresh SQLite file always, and a fresh PostgreSQL schema when
// PARTNERAPI_TEST_DATABASE_URL is set (CI sets it). Every store interface has
// one suite, run unchanged against both.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	"partnerapi/internal/postgres"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/sqlite"
)

// EnvPostgres names the variable holding the PostgreSQL test database URL.
const EnvPostgres = "PARTNERAPI_TEST_DATABASE_URL"

// Each runs fn as a subtest once per available database, each fresh and
// empty. migrate (may be nil) prepares the schema.
func Each(t *testing.T, migrate func(context.Context, *sqldb.DB) error, fn func(t *testing.T, db *sqldb.DB)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) {
		db := SQLite(t)
		if migrate != nil {
			if err := migrate(context.Background(), db); err != nil {
				t.Fatal(err)
			}
		}
		fn(t, db)
	})
	t.Run("postgres", func(t *testing.T) {
		db := Postgres(t)
		if migrate != nil {
			if err := migrate(context.Background(), db); err != nil {
				t.Fatal(err)
			}
		}
		fn(t, db)
	})
}

// SQLite opens a fresh database in a temp dir, closed when the test ends.
func SQLite(t testing.TB) *sqldb.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// PostgresURL returns a URL of a fresh schema in the test database, dropped
// when the test ends; it skips when PARTNERAPI_TEST_DATABASE_URL is unset.
func PostgresURL(t testing.TB) string {
	t.Helper()
	base := os.Getenv(EnvPostgres)
	if base == "" {
		t.Skip("PostgreSQL conformance skipped: " + EnvPostgres + " is not set (CI sets it)")
	}
	ctx := context.Background()
	admin, err := postgres.Open(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "t_" + hex.EncodeToString(b[:])
	if _, err := admin.W.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		admin.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = admin.W.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		admin.Close()
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// Postgres opens a fresh schema (see PostgresURL).
func Postgres(t testing.TB) *sqldb.DB {
	t.Helper()
	u := PostgresURL(t)
	db, err := postgres.Open(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
