package kernels

import (
	"fmt"
	"sync/atomic"
	"testing"
)

// TestParallelForCoversEachIndexOnce checks the pool's chunking: for sizes
// below, at and far above the parallel threshold (including ones the
// shrinking chunks do not divide evenly), every index of [0, n) is passed
// to fn exactly once, in ranges that lie inside [0, n).
func TestParallelForCoversEachIndexOnce(t *testing.T) {
	for _, n := range []int{1, 3, 4, 31, 32, 33, 64, 127, 576, 1000, 4864} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			for range 20 {
				seen := make([]atomic.Int32, n)
				var bad atomic.Bool
				parallelFor(n, 1<<30, func(lo, hi int) {
					if lo < 0 || hi > n || lo >= hi {
						bad.Store(true)
						return
					}
					for i := lo; i < hi; i++ {
						seen[i].Add(1)
					}
				})
				if bad.Load() {
					t.Fatalf("fn got a range outside [0, %d) or an empty one", n)
				}
				for i := range seen {
					if c := seen[i].Load(); c != 1 {
						t.Fatalf("index %d of %d processed %d times", i, n, c)
					}
				}
			}
		})
	}
}
