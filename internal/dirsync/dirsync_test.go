package dirsync_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"partnerapi/internal/dirsync"
)

// A directory syncs, with a file just renamed into it; a directory that is
// not there is an error, not skipped as a system that cannot sync one.
func TestSync(t *testing.T) {
	dir := t.TempDir()
	tmp := filepath.Join(dir, "f.tmp")
	if err := os.WriteFile(tmp, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "f")); err != nil {
		t.Fatal(err)
	}
	if err := dirsync.Sync(dir); err != nil {
		t.Fatalf("Sync of a directory: %v", err)
	}
	if err := dirsync.Sync(filepath.Join(dir, "gone")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Sync of a directory not there: %v, want ErrNotExist", err)
	}
}
