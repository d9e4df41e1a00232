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

// TestRecycledJobsRunEachRegionOnce runs many short regions back to back
// on a pool of four participants (more than this machine may have cores, so
// that workers are often descheduled mid-region and come back late, holding
// a job that has since been reused): every region must run each of its
// indexes exactly once and only its own function. A recycled job that a
// late worker could still read while it was set up again would show here
// (and to the race detector) as an index run twice, by a stale function, or
// not at all.
func TestRecycledJobsRunEachRegionOnce(t *testing.T) {
	p := newWorkerPool(4)
	regions := 20000
	if testing.Short() || raceEnabled {
		regions = 3000
	}
	seen := make([]atomic.Int32, 64)
	for r := range regions {
		n := 8 + r%57
		var stale atomic.Bool
		region := int32(r)
		p.parallel(n, 1<<30, 0, func(lo, hi int) {
			if region != int32(r) {
				stale.Store(true)
			}
			for i := lo; i < hi; i++ {
				seen[i].Add(1)
			}
		})
		if stale.Load() {
			t.Fatalf("region %d ran another region's function", r)
		}
		for i := range n {
			if c := seen[i].Swap(0); c != 1 {
				t.Fatalf("region %d: index %d of %d ran %d times", r, i, n, c)
			}
		}
	}
}

// TestParallelRegionAllocatesNothing: a region of a function bound once
// allocates nothing (the jobs are recycled), so a decode step of some 60
// regions makes no garbage.
func TestParallelRegionAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector instruments allocations")
	}
	var sum atomic.Int64
	fn := func(lo, hi int) { sum.Add(int64(hi - lo)) }
	allocs := testing.AllocsPerRun(1000, func() { workers.parallel(1000, 1<<30, 0, fn) })
	if allocs != 0 {
		t.Errorf("a parallel region made %.2f heap allocations, want 0", allocs)
	}
	if want := int64(1000 * 1001); sum.Load() != want {
		t.Errorf("the regions covered %d items, want %d", sum.Load(), want)
	}
}

// TestClaimItems pins the smallest claim: n ÷ 32 items for large regions,
// enough items for poolClaimWork of work in small ones, never more than
// the region, and the n ÷ 32 floor alone when the region states no work.
func TestClaimItems(t *testing.T) {
	for _, c := range []struct {
		n, work int
		want    int64
	}{
		{18, 288 * 288 * 10, 12},     // a 15M-class 288×288 product of ten tokens
		{96, 1536 * 576, 57},         // a 135M-class FFN product of one token
		{3072, 49152 * 576 * 10, 96}, // the 135M classifier, ten tokens: n ÷ 32
		{4, 1 << 10, 4},              // never more than the region
		{64, 0, 2},                   // no work stated: n ÷ 32
		{8, 1 << 30, 1},              // at least one item
	} {
		if got := claimItems(c.n, c.work); got != c.want {
			t.Errorf("claimItems(%d, %d) = %d, want %d", c.n, c.work, got, c.want)
		}
	}
}
