//go:build !unix

package testenv

import "time"

// ProcessCPU is zero where getrusage is missing: a benchmark's CPU per
// operation then reads 0 rather than a wrong figure.
func ProcessCPU() time.Duration { return 0 }
