//go:build !unix

package bankingsql

import "time"

// processCPU is zero where getrusage is missing: the benchmark's
// cpu-µs/doc then reads 0 rather than a wrong figure.
func processCPU() time.Duration { return 0 }
