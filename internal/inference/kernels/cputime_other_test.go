//go:build !linux

package kernels

import "time"

// threadCPU is unavailable here; benchmarks skip the metric.
func threadCPU() time.Duration { return 0 }
