package sqldb_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

var migrations = fstest.MapFS{
	"0001_items.sql": {Data: []byte("-- items\nCREATE TABLE items (\n id {{autoid}},\n name TEXT NOT NULL UNIQUE,\n blob {{bytes}}\n);\nCREATE INDEX items_name ON items (name);\n")},
	"0002_more.sql":  {Data: []byte("ALTER TABLE items ADD COLUMN qty INTEGER NOT NULL DEFAULT 0;\n")},
	// One version spelled per engine: each applies only its own file.
	"0003_engine.sqlite.sql":   {Data: []byte("CREATE TABLE only_sqlite (x INTEGER);\n")},
	"0003_engine.postgres.sql": {Data: []byte("CREATE TABLE only_postgres (x INTEGER);\n")},
}

func TestMigrateConformance(t *testing.T) {
	storetest.Each(t, nil, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		// Several processes start at once on one database: all must succeed
		// and the migrations must be applied exactly once.
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Add(1)
			go func(i int) { defer wg.Done(); errs[i] = db.Migrate(ctx, "demo", migrations) }(i)
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Migrate(ctx, "demo", migrations); err != nil {
			t.Fatalf("second run: %v", err)
		}
		var n int
		if err := db.R.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE domain = $1`, "demo").Scan(&n); err != nil || n != 3 {
			t.Fatalf("bookkeeping rows = %d, %v", n, err)
		}
		own, other := "only_sqlite", "only_postgres"
		if db.Dialect == sqldb.Postgres {
			own, other = other, own
		}
		if _, err := db.R.ExecContext(ctx, `INSERT INTO `+own+` (x) VALUES (1)`); err != nil {
			t.Fatalf("the engine's own migration was not applied: %v", err)
		}
		if _, err := db.R.ExecContext(ctx, `SELECT x FROM `+other); err == nil {
			t.Fatalf("the other engine's migration was applied too")
		}
		var id int64
		if err := db.W.QueryRowContext(ctx, `INSERT INTO items (name, blob, qty) VALUES ($1, $2, $3) RETURNING id`, "a", []byte{1, 2}, 3).Scan(&id); err != nil {
			t.Fatal(err)
		}
		_, err := db.W.ExecContext(ctx, `INSERT INTO items (name) VALUES ($1)`, "a")
		if !sqldb.IsUniqueViolation(err) {
			t.Fatalf("duplicate insert: %v, want unique violation", err)
		}
		// A failed transaction leaves nothing behind.
		boom := errors.New("boom")
		err = db.Tx(ctx, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO items (name) VALUES ($1)`, "b"); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("tx err = %v", err)
		}
		if err := db.R.QueryRowContext(ctx, `SELECT COUNT(*) FROM items`).Scan(&n); err != nil || n != 1 {
			t.Fatalf("rows after rollback = %d, %v", n, err)
		}
		if err := db.Ping(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

func TestMigrateRejectsBadNames(t *testing.T) {
	db := storetest.SQLite(t)
	bad := fstest.MapFS{"first.sql": {Data: []byte("SELECT 1;")}}
	if err := db.Migrate(context.Background(), "bad", bad); err == nil {
		t.Fatal("a migration without a number was accepted")
	}
}

// A database migrated by a newer build refuses an older build's Migrate
// with ErrNewerSchema, naming both versions, and leaves the database as it
// was; a build that knows every applied migration, or one with none for the
// domain, still migrates it.
func TestMigrateRefusesNewerSchema(t *testing.T) {
	storetest.Each(t, nil, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		if err := db.Migrate(ctx, "demo", migrations); err != nil {
			t.Fatal(err)
		}
		older := fstest.MapFS{"0001_items.sql": migrations["0001_items.sql"]}
		err := db.Migrate(ctx, "demo", older)
		if !errors.Is(err, sqldb.ErrNewerSchema) || !strings.Contains(err.Error(), "migration 3") || !strings.Contains(err.Error(), "up to 1") {
			t.Fatalf("older build's migrate: %v, want ErrNewerSchema naming migrations 3 and 1", err)
		}
		var n int
		if err := db.R.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE domain = $1`, "demo").Scan(&n); err != nil || n != 3 {
			t.Fatalf("bookkeeping rows after the refusal = %d, %v", n, err)
		}
		for _, tc := range []struct {
			name, domain string
			files        fstest.MapFS
		}{
			{"the same build", "demo", migrations},
			{"another domain", "other", fstest.MapFS{"0001_other.sql": {Data: []byte("CREATE TABLE other_items (x INTEGER);\n")}}},
		} {
			if err := db.Migrate(ctx, tc.domain, tc.files); err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
		}
	})
}
