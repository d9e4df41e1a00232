//go:build !unix && !windows

package filelock

import "os"

// TryLock takes no lock where neither flock nor LockFileEx is (Plan 9,
// WebAssembly): its callers say what that leaves unguarded there.
func TryLock(*os.File) error { return nil }

// TryLockShared takes no lock there either.
func TryLockShared(*os.File) error { return nil }

// Unlock has no lock to give back.
func Unlock(*os.File) error { return nil }
