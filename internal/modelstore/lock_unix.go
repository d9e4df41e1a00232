//go:build unix

package modelstore

import (
	"errors"
	"os"
	"syscall"
)

// errLocked is what lockFile returns when another process holds the lock.
var errLocked = syscall.EWOULDBLOCK

// lockFile takes an exclusive advisory lock on f without waiting; the
// kernel drops it when the process dies, so no stale lock outlives a crash.
func lockFile(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EAGAIN) {
		return errLocked
	}
	return err
}

func unlockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

// freeBytes is the space an unprivileged writer may still use on the file
// system holding path.
func freeBytes(path string) (uint64, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, false
	}
	return uint64(st.Bavail) * uint64(st.Bsize), true
}
