//go:build unix

package main

import "syscall"

// minorFaults is the process's minor page faults so far (0 where the
// system does not count them).
func minorFaults() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return int64(ru.Minflt)
}
