//go:build !amd64 || purego

package kernels

// hasAVX2 is false where the assembly kernels are not built; the portable
// Go kernels in dot.go stay in place.
const hasAVX2 = false
