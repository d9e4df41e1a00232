//go:build !purego

package kernels

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU serves the assembly kernels' benchmarks (the *_amd64_test.go
// files), so it is built with them only and is never unused elsewhere.

// threadCPU is the CPU time of the calling OS thread (the caller locks its
// goroutine to the thread). A single-threaded kernel benchmark measured by
// it is not slowed by the time other processes take the core from it.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}
