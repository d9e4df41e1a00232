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

// TestPoolShareClaims runs a job with two shares on the caller alone, as
// when the worker never gets the CPU: the caller must walk its own share
// front to back in adjacent claims (one ascending stream), then take the
// whole of the other share from its back, running every index once.
func TestPoolShareClaims(t *testing.T) {
	for _, n := range []int{4, 33, 576, 4864} {
		p := &workerPool{n: 2, callerWake: make(chan struct{}, 1)}
		var calls [][2]int
		seen := make([]int, n)
		j := &poolJob{n: int64(n), min: int64(max(1, n/32)), max: int64(max(1, n/8)), np: 2, fn: func(lo, hi int) {
			calls = append(calls, [2]int{lo, hi})
			for i := lo; i < hi; i++ {
				seen[i]++
			}
		}}
		j.shares[0].Store(uint64(n / 2))
		j.shares[1].Store(uint64(n/2)<<32 | uint64(n))
		p.work(j, 0)
		for i, c := range seen {
			if c != 1 {
				t.Fatalf("n=%d: index %d run %d times", n, i, c)
			}
		}
		next, i := 0, 0
		for ; i < len(calls) && calls[i][0] < n/2; i++ {
			if calls[i][0] != next || calls[i][1] > n/2 {
				t.Fatalf("n=%d: own claim %d is %v, want one starting at %d within the share", n, i, calls[i], next)
			}
			next = calls[i][1]
		}
		if next != n/2 {
			t.Fatalf("n=%d: own claims ended at %d, want %d", n, next, n/2)
		}
		end := n
		for ; i < len(calls); i++ {
			if calls[i][1] != end {
				t.Fatalf("n=%d: stolen claim %v does not end where the share's rest does (%d)", n, calls[i], end)
			}
			end = calls[i][0]
		}
		if end != n/2 || j.done.Load() != int64(n) {
			t.Fatalf("n=%d: steals stopped at %d, done %d", n, end, j.done.Load())
		}
	}
}
