//go:build !unix && !windows

package main

import "os"

// lockFile takes no lock where neither flock nor LockFileEx is (Plan 9,
// WebAssembly): a second serve on one data directory is not refused there.
func lockFile(*os.File) error { return nil }

func unlockFile(*os.File) error { return nil }
