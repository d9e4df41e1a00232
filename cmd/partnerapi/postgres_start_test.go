package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"partnerapi/internal/postgres"
	"partnerapi/internal/storetest"
)

// Instances started at once on one fresh PostgreSQL database (a rolling
// deploy, CI's parallel jobs) all start: the migrations serialise on the
// advisory lock and the sandbox seed converges, whatever the interleaving.
func TestServeInstancesStartTogetherOnOnePostgres(t *testing.T) {
	dbURL, _ := scratchPostgres(t, "start")
	ctx := context.Background()
	keyFile, _ := writeBankKeyPEM(t) // one bank key for all, as the README asks
	hookKey := newWebhookKey(t)      // and one webhook key
	const n = 3
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type outcome struct {
		addrs map[string]string
		err   error
	}
	results := make(chan outcome, 2*n)
	var wg sync.WaitGroup
	for range n {
		dir := t.TempDir()
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := []string{"--database-url", dbURL, "--data-dir", dir, "--models-dir", filepath.Join(dir, "models"),
				"--banking-addr", "127.0.0.1:0", "--assistant-addr", "127.0.0.1:0", "--smarthome-addr", "127.0.0.1:0",
				"--assistant-grpc-addr", "off", "--log-flush-interval", "0", "--shutdown-timeout", "5s",
				"--banking-jws-key", keyFile, "--banking-webhook-key", hookKey}
			err := serve(sctx, args, func(string) string { return "" }, stdio{out: io.Discard, err: io.Discard},
				func(a map[string]string) { results <- outcome{addrs: a} })
			if err != nil || sctx.Err() == nil {
				results <- outcome{err: fmt.Errorf("serve returned: %v", err)}
			}
		}()
	}
	timeout := time.After(90 * time.Second)
	for started := 0; started < n; {
		select {
		case o := <-results:
			if o.err != nil {
				cancel()
				wg.Wait()
				t.Fatal(o.err)
			}
			started++
			for _, svc := range []string{"banking", "assistant", "smarthome"} {
				resp, err := http.Get("http://" + o.addrs[svc] + "/healthz")
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Errorf("%s /healthz = %d", svc, resp.StatusCode)
				}
			}
		case <-timeout:
			cancel()
			wg.Wait()
			t.Fatalf("%d of %d instances started in 90s", started, n)
		}
	}
	cancel()
	wg.Wait()
	close(results)
	for o := range results {
		if o.err != nil {
			t.Error(o.err)
		}
	}
	var count int
	db, err := postgres.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.R.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations`).Scan(&count); err != nil || count == 0 {
		t.Fatalf("schema_migrations: %d, %v", count, err)
	}
	var dup int
	if err := db.R.QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT domain, version FROM schema_migrations GROUP BY domain, version HAVING COUNT(*) > 1) d`).Scan(&dup); err != nil || dup != 0 {
		t.Fatalf("migrations applied twice: %d, %v", dup, err)
	}
	// A replica whose data directory was not copied makes a bank key of its
	// own and is refused instead of signing under another kid.
	dir := t.TempDir()
	err = serveStarts(t, dir, "--database-url", dbURL, "--banking-webhook-key", hookKey)
	if err == nil || !strings.Contains(err.Error(), "bank JWS key (--banking-jws-key, default") {
		t.Fatalf("a replica with its own bank key: %v", err)
	}
}

// scratchPostgres creates a database of its own on the test server, named
// partnerapi_<what>_<random>, drops it (with any sessions still on it) when
// the test ends, and returns its URL and a drop that removes it at once (a
// database going away under a server); the test is skipped without a server.
func scratchPostgres(t *testing.T, what string) (dbURL string, drop func() error) {
	t.Helper()
	base := os.Getenv(storetest.EnvPostgres)
	if base == "" {
		t.Skip(storetest.EnvPostgres + " is not set")
	}
	ctx := context.Background()
	admin, err := postgres.Open(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "partnerapi_" + what + "_" + hex.EncodeToString(b[:])
	if _, err := admin.W.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	// Cleanups run last-added first: the drop comes before the close.
	drop = func() error {
		_, err := admin.W.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		return err
	}
	t.Cleanup(func() { _ = drop() })
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String(), drop
}
