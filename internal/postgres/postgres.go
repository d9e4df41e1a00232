// Package postgres opens a PostgreSQL database through pgx's database/sql
// driver, for deployments that outgrow the embedded SQLite file.
package postgres

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"partnerapi/internal/sqldb"
)

// Open connects to url (postgres://...) and checks that the server answers.
func Open(ctx context.Context, url string) (*sqldb.DB, error) {
	// A URL pgx cannot read is the operator's typo, not an unreachable
	// server: said so before any connection is tried.
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("database url: %s", strings.Join(strings.Fields(err.Error()), " "))
	}
	cfg.DialFunc = dialer().DialContext
	pool := stdlib.OpenDB(*cfg)
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

// Dead connections. A database that goes away without closing its
// connections (a failover to a standby, a network partition, a paused VM)
// leaves them open on our side: a query sent on one waits for an answer
// until the kernel gives up retransmitting, about 15 minutes on Linux, and
// an idle one is found dead only when used. So the connections to
// PostgreSQL probe an idle peer after 15 s (keepalive, three probes 5 s
// apart) and, where the system has it (Linux), give up on data the peer
// has not acknowledged after userTimeout: a query on a dead connection
// fails as a database unavailable within half a minute, and the pool
// dials afresh, instead of hanging each request that draws it.
const (
	keepAliveIdle     = 15 * time.Second
	keepAliveInterval = 5 * time.Second
	keepAliveCount    = 3
	userTimeout       = 30 * time.Second
)

// dialer is the dialer of every connection to PostgreSQL.
func dialer() *net.Dialer {
	return &net.Dialer{
		KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: keepAliveIdle, Interval: keepAliveInterval, Count: keepAliveCount},
		Control:         setUserTimeout, // usertimeout_*.go
	}
}
