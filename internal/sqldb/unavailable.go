package sqldb

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
)

// Unavailable reports whether err says that the database could not be used
// for the moment rather than that the request or our code is wrong: the
// server cannot be reached or refuses connections while it starts, stops or
// is full, a connection broke mid-request, or SQLite stayed busy or locked
// past its busy timeout or ran out of disk. The transports answer such
// errors with their own "unavailable" status and a Retry-After instead of
// an internal error, since a client that retries later will succeed once the
// database is back, and the server recovers without a restart.
//
// It looks only at error types and interfaces, never at the text, and names
// no driver: pgconn.PgError reports its SQLSTATE through SQLState() string
// and modernc.org/sqlite's Error its result code through Code() int, and
// pgx's "failed to connect" errors unwrap to the dial's *net.OpError. A
// context's cancellation or deadline is the caller's own ending, not an
// outage, even when it cut a connection short, so it is never unavailable.
func Unavailable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var state interface{ SQLState() string }
	if errors.As(err, &state) {
		// A server's answer decides: a syntax error or a unique violation
		// that arrived over a working connection is ours or the client's.
		return unavailableState(state.SQLState())
	}
	var code interface{ Code() int }
	if errors.As(err, &code) {
		// SQLite's extended codes keep the primary code in the low byte
		// (SQLITE_BUSY_SNAPSHOT is 517, SQLITE_LOCKED_SHAREDCACHE 262).
		switch code.Code() & 0xff {
		case sqliteBusy, sqliteLocked, sqliteFull:
			return true
		}
	}
	// database/sql answers driver.ErrBadConn for a connection that broke
	// inside a transaction, which it cannot retry on another.
	var opErr *net.OpError
	return errors.Is(err, driver.ErrBadConn) || errors.As(err, &opErr) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, io.ErrUnexpectedEOF)
}

// SQLite's primary result codes that mean "not now" (sqlite3.h).
const (
	sqliteBusy   = 5
	sqliteLocked = 6
	sqliteFull   = 13
)

// unavailableState reports whether a PostgreSQL SQLSTATE means the server
// cannot serve the request for now: class 08 (connection exception),
// 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now
// (starting up or in recovery) and 53300 too_many_connections.
func unavailableState(s string) bool {
	switch s {
	case "57P01", "57P02", "57P03", "53300":
		return true
	}
	return strings.HasPrefix(s, "08")
}
