package postgres

import (
	"context"
	"net"
	"os"
	"testing"

	"github.com/jackc/pgx/v5/stdlib"
	"golang.org/x/sys/unix"
)

// The pool's connections to PostgreSQL carry the socket options that find
// a dead peer within half a minute: keepalive probes after 15 s idle, 5 s
// apart, three of them, and TCP_USER_TIMEOUT of 30 s. Read back from a
// live connection's socket, so the test fails if the dialer is not the
// one pgx uses.
func TestConnectionsFindDeadPeers(t *testing.T) {
	url := os.Getenv("PARTNERAPI_TEST_DATABASE_URL")
	if url == "" {
		t.Skip("SKIPPING: PARTNERAPI_TEST_DATABASE_URL is not set; this test needs a PostgreSQL over TCP (CI sets it)")
	}
	db, err := Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.W.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	err = conn.Raw(func(driverConn any) error {
		tcp, ok := driverConn.(*stdlib.Conn).Conn().PgConn().Conn().(*net.TCPConn)
		if !ok {
			t.Skip("SKIPPING: the test database is not reached over TCP")
		}
		raw, err := tcp.SyscallConn()
		if err != nil {
			return err
		}
		return raw.Control(func(fd uintptr) {
			for _, o := range []struct {
				name       string
				level, opt int
				want       int
			}{
				{"SO_KEEPALIVE", unix.SOL_SOCKET, unix.SO_KEEPALIVE, 1},
				{"TCP_KEEPIDLE", unix.IPPROTO_TCP, unix.TCP_KEEPIDLE, int(keepAliveIdle.Seconds())},
				{"TCP_KEEPINTVL", unix.IPPROTO_TCP, unix.TCP_KEEPINTVL, int(keepAliveInterval.Seconds())},
				{"TCP_KEEPCNT", unix.IPPROTO_TCP, unix.TCP_KEEPCNT, keepAliveCount},
				{"TCP_USER_TIMEOUT", unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int(userTimeout.Milliseconds())},
			} {
				got, err := unix.GetsockoptInt(int(fd), o.level, o.opt)
				if err != nil || got != o.want {
					t.Errorf("%s = %d (%v), want %d", o.name, got, err, o.want)
				}
			}
		})
	})
	if err != nil {
		t.Fatal(err)
	}
}
