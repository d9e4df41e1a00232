package filelock_test

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"partnerapi/internal/filelock"
)

func open(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// A second open file of the same path cannot take the lock while the first
// holds it, and can once it is given back, or once the file holding it is
// closed (as when its process ends).
func TestTryLock(t *testing.T) {
	switch runtime.GOOS {
	case "plan9", "js", "wasip1":
		t.Skipf("no system lock on %s", runtime.GOOS)
	}
	path := filepath.Join(t.TempDir(), "lock")
	first, second := open(t, path), open(t, path)
	if err := filelock.TryLock(first); err != nil {
		t.Fatalf("the first lock: %v", err)
	}
	if err := filelock.TryLock(second); !errors.Is(err, filelock.ErrLocked) {
		t.Fatalf("a second lock while the first holds it: %v, want ErrLocked", err)
	}
	if err := filelock.Unlock(first); err != nil {
		t.Fatal(err)
	}
	if err := filelock.TryLock(second); err != nil {
		t.Fatalf("a lock given back: %v, want taken", err)
	}
	first.Close()
	third := open(t, path)
	if err := filelock.TryLock(third); !errors.Is(err, filelock.ErrLocked) {
		t.Fatalf("a third lock while the second holds it: %v, want ErrLocked", err)
	}
	second.Close()
	if err := filelock.TryLock(third); err != nil {
		t.Fatalf("a lock whose holder closed its file: %v, want taken", err)
	}
}

// TestTryLockShared holds the shared lock to what a PostgreSQL serve and a
// restore need of it: shared holders together, an exclusive one refused
// while any shared one holds the file, and a shared one refused while the
// exclusive one does.
func TestTryLockShared(t *testing.T) {
	switch runtime.GOOS {
	case "plan9", "js", "wasip1":
		t.Skipf("no system lock on %s", runtime.GOOS)
	}
	path := filepath.Join(t.TempDir(), "lock")
	a, b, x := open(t, path), open(t, path), open(t, path)
	if err := filelock.TryLockShared(a); err != nil {
		t.Fatalf("the first shared lock: %v", err)
	}
	if err := filelock.TryLockShared(b); err != nil {
		t.Fatalf("a second shared lock beside the first: %v, want taken", err)
	}
	if err := filelock.TryLock(x); !errors.Is(err, filelock.ErrLocked) {
		t.Fatalf("an exclusive lock while shared ones hold the file: %v, want ErrLocked", err)
	}
	if err := filelock.Unlock(a); err != nil {
		t.Fatal(err)
	}
	if err := filelock.TryLock(x); !errors.Is(err, filelock.ErrLocked) {
		t.Fatalf("an exclusive lock while one shared lock still holds the file: %v, want ErrLocked", err)
	}
	b.Close()
	if err := filelock.TryLock(x); err != nil {
		t.Fatalf("an exclusive lock once every shared holder is gone: %v, want taken", err)
	}
	if err := filelock.TryLockShared(open(t, path)); !errors.Is(err, filelock.ErrLocked) {
		t.Fatalf("a shared lock while the exclusive one holds the file: %v, want ErrLocked", err)
	}
}
