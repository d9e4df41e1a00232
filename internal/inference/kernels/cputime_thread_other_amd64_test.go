//go:build !linux && !purego

package kernels

import "time"

// threadCPU is unavailable here; benchmarks skip the metric. Like its Linux
// form it serves the assembly kernels' benchmarks only.
func threadCPU() time.Duration { return 0 }
