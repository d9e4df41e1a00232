//go:build unix

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"partnerapi/internal/sqlite"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A second serve on one SQLite data directory stops at start with one line
// naming the first one's pid; once the first has stopped, a serve starts
// there again. Provisioning commands still run beside a serve.
func TestServeRefusesASecondServeOnOneDataDir(t *testing.T) {
	dir := t.TempDir()
	first := startControlledServer(t, dir, "--only", "smarthome")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := serve(ctx, []string{"--data-dir", dir, "--only", "smarthome", "--smarthome-addr", "127.0.0.1:0", "--log-flush-interval", "0"},
		func(string) string { return "" }, stdio{out: io.Discard, err: io.Discard}, func(map[string]string) {
			t.Error("a second serve started on the same data dir")
			cancel()
		})
	want := fmt.Sprintf("in use by another partnerapi serve (pid %d)", os.Getpid())
	if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("second serve: %v, want one line with %q", err, want)
	}
	if err := runSmarthome(ctx, []string{"agent", "create", "--login", "beside", "--data-dir", dir},
		func(string) string { return "" }, stdio{in: strings.NewReader(""), out: io.Discard, err: io.Discard}); err != nil {
		t.Fatalf("provisioning beside serve: %v", err)
	}
	first.cancel()
	if err := <-first.errc; err != nil {
		t.Fatalf("first serve: %v", err)
	}
	first.errc <- nil
	startControlledServer(t, dir, "--only", "smarthome")
}

// Serve on a PostgreSQL database holds its data directory shared: a second
// such serve starts beside it (replicas may share the keys), but restore,
// which replaces those keys, is refused while either runs, and so is an
// SQLite serve; once both have stopped the restore goes through.
func TestRestoreRefusedBesidePostgresServe(t *testing.T) {
	dbURL, _ := scratchPostgres(t, "restorelock")
	src := t.TempDir()
	backup := filepath.Join(t.TempDir(), "b")
	if _, err := runTool(t, "backup", "--data-dir", src, "--database-url", dbURL, "--out", backup); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	first := startControlledServer(t, dir, "--only", "smarthome", "--database-url", dbURL)
	second := startControlledServer(t, dir, "--only", "smarthome", "--database-url", dbURL)
	_, err := runTool(t, "restore", "--from", backup, "--data-dir", dir, "--database-url", dbURL)
	if err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("restore beside two PostgreSQL serves: %v, want refused as in use", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = serve(ctx, []string{"--data-dir", dir, "--only", "smarthome", "--smarthome-addr", "127.0.0.1:0", "--log-flush-interval", "0"},
		func(string) string { return "" }, stdio{out: io.Discard, err: io.Discard}, func(map[string]string) {
			t.Error("an SQLite serve started on a data dir PostgreSQL serves share")
			cancel()
		})
	if err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("SQLite serve beside PostgreSQL serves: %v, want refused as in use", err)
	}
	for _, cs := range []*controlledServer{first, second} {
		cs.cancel()
		if err := <-cs.errc; err != nil {
			t.Fatalf("serve: %v", err)
		}
		cs.errc <- nil
	}
	if _, err := runTool(t, "restore", "--from", backup, "--data-dir", dir, "--database-url", dbURL); err != nil {
		t.Fatalf("restore once the serves stopped: %v", err)
	}
}

// A restore holds the directory whole: a PostgreSQL serve does not start
// on it meanwhile, and shared holders do not keep each other out.
func TestShareDataDirAgainstTheExclusiveLock(t *testing.T) {
	dir := t.TempDir()
	a, err := shareDataDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := shareDataDir(dir)
	if err != nil {
		t.Fatalf("a second shared hold: %v", err)
	}
	if _, err := lockDataDir(dir); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("the exclusive lock beside shared holds: %v, want refused", err)
	}
	a()
	b()
	release, err := lockDataDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	want := fmt.Sprintf("(pid %d)", os.Getpid())
	if _, err := shareDataDir(dir); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("a shared hold beside the exclusive lock: %v, want refused naming %s", err, want)
	}
}

// A database an older build made under the umask (0644) is served as it
// is, with a WARN line at start naming the file; a new one is made 0600 and
// draws none.
func TestServeWarnsOfAReadableDatabase(t *testing.T) {
	const warning = "the database file may be read by other local users"
	fresh := startControlledServer(t, t.TempDir(), "--only", "smarthome")
	if strings.Contains(fresh.logs.String(), warning) {
		t.Fatalf("a new database drew the warning:\n%s", fresh.logs.String())
	}
	dir := t.TempDir()
	db, err := sqlite.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	path := filepath.Join(dir, sqlite.FileName)
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	old := startControlledServer(t, dir, "--only", "smarthome")
	if logs := old.logs.String(); !strings.Contains(logs, warning) || !strings.Contains(logs, path) {
		t.Fatalf("no warning naming %s for a 0644 database:\n%s", path, logs)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("serve changed the operator's mode: %v %v", fi.Mode(), err)
	}
}
