package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"partnerapi/internal/filelock"
	"partnerapi/internal/sqlite"
)

// dataDirLockFile is the file in the SQLite data directory that a running
// serve holds locked.
const dataDirLockFile = "serve.lock"

// lockDataDir makes serve the only one on an SQLite data directory, and
// restore the only user of any data directory. Two
// serve processes on one file would each have their own single writer and
// group commit, waiting on each other's write lock for up to the busy
// timeout under load; so a second one stops at start with a line naming
// the first one's pid. Provisioning commands and `migrate` take no lock:
// they are safe beside serve (SQLite's own locking, WAL). The lock is the
// system's (flock, LockFileEx on Windows), so it ends with its process,
// however it ended; the returned release is for serve's own return. Where
// the system has neither (Plan 9, WebAssembly) a second serve is not
// refused.
func lockDataDir(dir string) (release func(), err error) {
	f, path, err := openLockFile(dir)
	if err != nil {
		return nil, err
	}
	if err := filelock.TryLock(f); err != nil {
		holder := lockHolder(path)
		f.Close()
		if errors.Is(err, filelock.ErrLocked) {
			return nil, fmt.Errorf("data dir %s is in use by another partnerapi serve%s: give each its own --data-dir, or share a PostgreSQL (--database-url)", dir, holder)
		}
		return nil, fmt.Errorf("data dir %s: lock: %w", dir, err)
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return func() {
		_ = f.Truncate(0)
		_ = filelock.Unlock(f)
		_ = f.Close()
	}, nil
}

// shareDataDir is serve's hold on its data directory when the database is
// PostgreSQL's. Several serve processes may share one data directory then
// (its keys and the bill journals, each journal locked on its own), so the
// lock is shared; but restore replaces those keys, and a serve still
// running on the old ones would seal new webhook secrets with a key the
// next start no longer has, so restore's exclusive lock is refused while
// any serve shares the directory, as it is while an SQLite serve holds it.
// An SQLite serve on a directory a PostgreSQL serve shares is refused too:
// it would take the directory whole.
func shareDataDir(dir string) (release func(), err error) {
	f, path, err := openLockFile(dir)
	if err != nil {
		return nil, err
	}
	if err := filelock.TryLockShared(f); err != nil {
		f.Close()
		if errors.Is(err, filelock.ErrLocked) {
			return nil, fmt.Errorf("data dir %s is in use by a partnerapi restore or an SQLite serve%s", dir, lockHolder(path))
		}
		return nil, fmt.Errorf("data dir %s: lock: %w", dir, err)
	}
	return func() {
		_ = filelock.Unlock(f)
		_ = f.Close()
	}, nil
}

// lockHolder names the pid an exclusive holder wrote into the lock file, as
// " (pid N)", or nothing when it holds none (shared holders write none).
func lockHolder(path string) string {
	raw, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		return ""
	}
	return fmt.Sprintf(" (pid %d)", pid)
}

// warnReadableDatabase logs a WARN line when the SQLite database, its WAL or
// its shared memory may be read by other local users. A new database is
// made 0600 (sqlite.Open), but one an older build made keeps the umask's
// 0644: its mode is the operator's to change (a backup agent in the group
// may rely on it), so serve says so at each start instead of changing it.
func warnReadableDatabase(log *slog.Logger, dir string) {
	for _, name := range []string{sqlite.FileName, sqlite.FileName + "-wal", sqlite.FileName + "-shm"} {
		path := filepath.Join(dir, name)
		fi, err := os.Stat(path)
		if err != nil || runtime.GOOS == "windows" || fi.Mode().Perm()&0o077 == 0 {
			continue
		}
		log.Warn("the database file may be read by other local users: it holds credential hashes, sealed webhook secrets and partners' documents; chmod 600 it (new databases are made so)",
			"file", path, "mode", fi.Mode().Perm().String())
	}
}

// openLockFile opens dir's serve.lock, making the directory and the file
// when they are not there yet.
func openLockFile(dir string) (f *os.File, path string, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, "", fmt.Errorf("data dir %s: %w", dir, err)
	}
	path = filepath.Join(dir, dataDirLockFile)
	f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, "", fmt.Errorf("data dir %s: lock: %w", dir, err)
	}
	return f, path, nil
}
