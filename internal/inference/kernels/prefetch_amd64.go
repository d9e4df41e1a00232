//go:build !purego

package kernels

// prefetchLines issues a PREFETCHT0 for every 64-byte line of [p, p+n).
// Prefetches retire without waiting for their data, so a core keeps many
// misses in flight without a register or a dependency per line (a Go loop
// loading a byte a line measured the same, within noise, and was dropped
// for this: it is also what a hint over data other goroutines write, like
// a KV cache, would need, as the race detector does not see it).
//
//go:noescape
func prefetchLines(p *byte, n int)

// prefetchAvailable: this build has prefetchLines.
const prefetchAvailable = true
