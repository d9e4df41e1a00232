package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestCheckpointer checks that the writer leaves checkpoints to the
// checkpointer, that the checkpointer empties the WAL into the database
// file, and that what was committed is there after Close.
func TestCheckpointer(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	var auto int
	if err := db.W.QueryRowContext(ctx, "PRAGMA wal_autocheckpoint").Scan(&auto); err != nil {
		t.Fatal(err)
	}
	if auto != 0 {
		t.Fatalf("writer wal_autocheckpoint = %d, want 0 (the checkpointer's job)", auto)
	}
	if _, err := db.W.ExecContext(ctx, "CREATE TABLE t (v TEXT)"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		if _, err := db.W.ExecContext(ctx, "INSERT INTO t VALUES (hex(randomblob(2000)))"); err != nil {
			t.Fatal(err)
		}
	}
	c := &checkpointer{r: db.R, stats: db.Checkpoints, bound: checkpointBound}
	frames, err := c.checkpoint("PASSIVE")
	if err != nil || frames == 0 {
		t.Fatal("the WAL held no frames after 50 commits")
	}
	// What /metrics reads: the WAL's size at the last checkpoint, and no
	// failure; a checkpoint on a closed pool is one.
	if got := db.Checkpoints.WALFrames.Load(); got != int64(frames) || db.Checkpoints.Failures.Load() != 0 {
		t.Fatalf("stats: %d frames, %d failures; want %d and 0", got, db.Checkpoints.Failures.Load(), frames)
	}
	var busy, log, copied int
	if err := db.R.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &log, &copied); err != nil {
		t.Fatal(err)
	}
	if copied != log {
		t.Fatalf("after a checkpoint %d of %d frames are copied", copied, log)
	}
	stats := db.Checkpoints
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	before := stats.Failures.Load()
	if _, err := c.checkpoint("PASSIVE"); err == nil {
		t.Fatal("a checkpoint on a closed pool worked")
	}
	if stats.Failures.Load() != before+1 {
		t.Fatalf("a failed checkpoint is not counted: %d failures", stats.Failures.Load())
	}
	info, err := os.Stat(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if info.Size() < 50*2000 {
		t.Fatalf("database file is %d bytes; the checkpoints did not reach it", info.Size())
	}
	db, err = Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.R.QueryRowContext(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 50 {
		t.Fatalf("%d rows after reopening, want 50", n)
	}
}

// TestOpenMakesTheDatabaseOwnerOnly checks that a new database, its WAL and
// its shared-memory file are readable by their owner alone in a data
// directory that others may list (an operator's 0755 one), as the key files
// beside them are.
func TestOpenMakesTheDatabaseOwnerOnly(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix file modes")
	}
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.W.ExecContext(ctx, "CREATE TABLE t (v TEXT)"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{FileName, FileName + "-wal", FileName + "-shm"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if perm := fi.Mode().Perm(); perm&0o077 != 0 {
			t.Errorf("%s has mode %v, want no access for group or others", name, perm)
		}
	}
}
