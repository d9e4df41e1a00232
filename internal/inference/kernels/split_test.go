package kernels

import (
	"sync/atomic"
	"testing"
)

// TestCalibrateSplit checks that the calibration measures something, keeps
// its threshold within bounds, and that the pool then splits exactly the
// regions of at least that much work.
func TestCalibrateSplit(t *testing.T) {
	c := CalibrateSplit()
	if c.Threshold < parallelThreshold || c.Threshold > maxSplitThreshold {
		t.Fatalf("threshold %d outside [%d, %d]", c.Threshold, parallelThreshold, maxSplitThreshold)
	}
	if got := workers.splitAt.Load(); got != int64(c.Threshold) {
		t.Fatalf("pool splits from %d, calibration says %d", got, c.Threshold)
	}
	if workers.n == 1 {
		t.Skip("one worker: nothing to split, nothing measured")
	}
	// The rate is always measured; the hand-off (the split product's time
	// beyond half the lone one's) can measure 0 where the product is slow
	// against it, as with the pure-Go kernels, whose split halves run at
	// times in less than half the lone product's time.
	if c.Rate <= 0 || c.Handoff < 0 {
		t.Fatalf("nothing measured: %+v", c)
	}
	t.Logf("hand-off %v, one core %.1f multiply-adds/ns, split from %d", c.Handoff, c.Rate, c.Threshold)
	if again := CalibrateSplit(); again != c {
		t.Fatalf("second call measured again: %+v, then %+v", c, again)
	}
	// A product region below the threshold runs on the caller in one call;
	// one at the threshold is cut into several calls. ParallelFor's callers
	// keep the fixed threshold.
	calls := func(work int) int64 {
		var n atomic.Int64
		poolParallelFor(1024, work, func(lo, hi int) { n.Add(1) })
		return n.Load()
	}
	if n := calls(c.Threshold - 1); n != 1 {
		t.Errorf("work %d below the threshold: %d calls, want 1", c.Threshold-1, n)
	}
	if n := calls(c.Threshold); n < 2 {
		t.Errorf("work %d at the threshold: %d call, want it split", c.Threshold, n)
	}
	var n atomic.Int64
	ParallelFor(1024, parallelThreshold, func(lo, hi int) { n.Add(1) })
	if n.Load() < 2 {
		t.Errorf("ParallelFor at the fixed threshold ran in %d call, want it split", n.Load())
	}
}
