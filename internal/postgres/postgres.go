// Package postgres opens a PostgreSQL database through pgx's database/sql
// driver, for deployments that outgrow the embedded SQLite file.
package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver

	"partnerapi/internal/sqldb"
)

// Open connects to url (postgres://...) and checks that the server answers.
func Open(ctx context.Context, url string) (*sqldb.DB, error) {
	// A URL pgx cannot read is the operator's typo, not an unreachable
	// server: said so before any connection is tried.
	if _, err := pgx.ParseConfig(url); err != nil {
		return nil, fmt.Errorf("database url: %s", strings.Join(strings.Fields(err.Error()), " "))
	}
	pool, err := sql.Open("pgx", url)
	if err != nil {
		return nil, fmt.Errorf("database url: %w", err)
	}
	pool.SetMaxOpenConns(32)
	pool.SetMaxIdleConns(32)
	pool.SetConnMaxIdleTime(5 * time.Minute)
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := pool.PingContext(pctx); err != nil {
		pool.Close()
		// pgx lists every address it tried on its own line; one line reads
		// better in a start-up failure.
		return nil, fmt.Errorf("database unreachable: %s", strings.Join(strings.Fields(err.Error()), " "))
	}
	return &sqldb.DB{Dialect: sqldb.Postgres, W: pool, R: pool}, nil
}
