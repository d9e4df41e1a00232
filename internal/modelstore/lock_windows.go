package modelstore

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/windows"
)

// errLocked is what lockFile returns when another process holds the lock.
var errLocked = windows.ERROR_LOCK_VIOLATION

// lockFile takes an exclusive lock on the first byte of f without waiting;
// Windows releases it when the handle closes or the process dies.
func lockFile(f *os.File) error {
	var ol windows.Overlapped
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return errLocked
	}
	return err
}

func unlockFile(f *os.File) error {
	var ol windows.Overlapped
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &ol)
}

// freeBytes is the space the caller may still use on the volume holding
// path.
func freeBytes(path string) (uint64, bool) {
	p, err := windows.UTF16PtrFromString(filepath.Dir(path))
	if err != nil {
		return 0, false
	}
	var free uint64
	if err := windows.GetDiskFreeSpaceEx(p, &free, nil, nil); err != nil {
		return 0, false
	}
	return free, true
}
