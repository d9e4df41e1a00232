//go:build !unix

package main

import "os"

// lockFile takes no lock where flock is missing (Windows): a second serve
// on one data directory is not refused there.
func lockFile(*os.File) error { return nil }

func unlockFile(*os.File) error { return nil }
