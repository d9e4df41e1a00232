// Package hugepage allocates the engine's large, long-read buffers (the
// packed weights) so that Linux backs them with transparent huge pages.
//
// With 4 KB pages a decode step that streams a hundred megabytes of
// weights crosses a page every 4 KB: each crossing can miss the TLB, and
// the hardware prefetchers stop at page boundaries and must find the
// stream again. On the Zen 3 host (THP in its common "madvise" mode, in
// which only memory advised MADV_HUGEPAGE gets huge pages; Go's runtime
// advises none since Go 1.21.1) one-stream decode of SmolLM2-135M's shape
// ran 1.02–1.04× faster with its weights in 2 MB pages than in one buffer
// of 4 KB pages (model.BenchmarkHugeStepSideBySide). The KV caches stay in
// 4 KB pages: a ten-stream step measured the same with them in huge pages,
// and each growth of a cache then paid ~1 ms for the kernel to assemble
// its huge pages.
//
// The memory stays an ordinary Go heap object, freed by the collector; this
// package only aligns it to 2 MB and advises the kernel, so it changes no
// lifetime and no result. Where the advice is unknown (other systems) or
// refused (THP set to "never"), the buffers are plain heap memory.
package hugepage

import (
	"sync/atomic"
	"unsafe"
)

// Size is the huge page size the buffers are aligned to (x86-64's 2 MB).
const Size = 2 << 20

// disabled turns the advice off (SetEnabled), for side-by-side benchmarks.
var disabled atomic.Bool

// SetEnabled turns huge-page buffers on or off for the allocations that
// follow (on by default).
func SetEnabled(on bool) { disabled.Store(!on) }

// Make returns a zeroed slice of n elements. Slices of at least Size bytes
// start on a huge-page boundary (the allocation is padded by up to Size
// bytes, which are never touched when the heap memory is fresh) and are
// advised for huge pages; smaller ones are plain make.
func Make[T any](n int) []T {
	var zero T
	esize := int(unsafe.Sizeof(zero))
	bytes := n * esize
	if bytes < Size || esize == 0 || disabled.Load() || !available {
		return make([]T, n)
	}
	raw := make([]byte, bytes+Size)
	off := int((Size - uintptr(unsafe.Pointer(unsafe.SliceData(raw)))%Size) % Size)
	if off%esize != 0 {
		// Heap objects are at least 8-byte aligned, and every element type
		// used here (bytes, int8, uint16, float32) divides that.
		return make([]T, n)
	}
	b := raw[off : off+bytes : off+bytes]
	advise(b)
	// The slice points into raw, so the collector keeps the whole
	// allocation alive for as long as it is used.
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
}
