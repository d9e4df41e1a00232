package postgres

import (
	"context"
	"strings"
	"testing"
)

// A URL pgx cannot read fails at once as a bad URL, on one line, with the
// password hidden, not as an unreachable database.
func TestOpenBadURL(t *testing.T) {
	for _, u := range []string{"postgres://x:hunter2@[bad", "postgres://root@127.0.0.1:5432/test?sslmode=bogus"} {
		_, err := Open(context.Background(), u)
		if err == nil {
			t.Fatalf("%s: opened", u)
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "database url: ") || strings.Contains(msg, "unreachable") || strings.Contains(msg, "hunter2") || strings.Contains(msg, "\n") {
			t.Errorf("%s: %q", u, msg)
		}
	}
}
