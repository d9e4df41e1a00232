//go:build unix

package filelock

import (
	"errors"
	"os"
	"syscall"
)

// TryLock takes f's exclusive lock without waiting: ErrLocked when another
// open file holds it.
func TryLock(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return ErrLocked
	}
	return err
}

// Unlock gives back the lock TryLock took on f.
func Unlock(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

// TryLockShared takes f's shared lock without waiting: any number of open
// files may hold it together, and ErrLocked means one holds the exclusive
// lock. An exclusive TryLock is refused while any shared lock is held.
func TryLockShared(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return ErrLocked
	}
	return err
}
