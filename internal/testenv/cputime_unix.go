//go:build unix

package testenv

import (
	"syscall"
	"time"
)

// ProcessCPU is the user and system CPU time the process has used, which
// benchmarks report per operation: other processes on a shared machine
// do not inflate it as they do wall time.
func ProcessCPU() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
