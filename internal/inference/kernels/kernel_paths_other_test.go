//go:build !amd64 || purego

package kernels

// tilePaths lists the ways the Q8_0 and Q4_0 products can run: without the
// assembly only the per-token row dots.
func tilePaths() []tilePath { return []tilePath{rowDotsPath()} }

// attnPaths lists the ways grouped attention can run: without the assembly
// only the Go kernels.
func attnPaths() []attnPath { return []attnPath{goAttnPath()} }

// q8Paths lists the ways attention over the int8 cache can run: without
// the assembly only the Go kernels.
func q8Paths() []attnPath { return []attnPath{q8GoPath()} }

// softmaxKernels lists the softmax implementations this machine can run:
// without the assembly only the Go one.
func softmaxKernels() []softmaxKernel { return []softmaxKernel{{"go", softmaxGo, ""}} }
