//go:build !amd64 || purego

package kernels

// Builds without the assembly do not prefetch: they have no packed weights
// to name, and their kernels are compute-bound.

func prefetchLines(p *byte, n int) {}

const prefetchAvailable = false
