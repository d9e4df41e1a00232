//go:build unix

package billjournal

import (
	"errors"
	"os"
	"syscall"
)

// tryLock takes f's exclusive lock without waiting: errLocked when another
// open file holds it. The lock is the system's (flock), so it ends with
// its process however the process ended.
func tryLock(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return errLocked
	}
	return err
}
