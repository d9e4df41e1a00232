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
