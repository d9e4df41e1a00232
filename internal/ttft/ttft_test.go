package ttft

import (
	"testing"
	"time"
)

func TestRecorder(t *testing.T) {
	tests := []struct {
		name    string
		observe []time.Duration
		count   uint64
		sum     float64
		buckets map[float64]uint64 // some of the cumulative buckets
	}{
		{"empty", nil, 0, 0, map[float64]uint64{0.025: 0, 60: 0}},
		{"one fast", []time.Duration{10 * time.Millisecond}, 1, 0.01, map[float64]uint64{0.025: 1, 0.05: 1, 60: 1}},
		{"on a bound", []time.Duration{100 * time.Millisecond}, 1, 0.1, map[float64]uint64{0.05: 0, 0.1: 1}},
		{"spread", []time.Duration{30 * time.Millisecond, 2 * time.Second, 2 * time.Minute}, 3, 122.03,
			map[float64]uint64{0.025: 0, 0.05: 1, 1: 1, 2.5: 2, 60: 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var h Recorder
			for _, d := range tc.observe {
				h.Observe(d)
			}
			got := h.Snapshot()
			if got.Count != tc.count || got.Sum < tc.sum-1e-9 || got.Sum > tc.sum+1e-9 {
				t.Errorf("count %d sum %v, want %d %v", got.Count, got.Sum, tc.count, tc.sum)
			}
			if len(got.Buckets) != len(Buckets) {
				t.Errorf("%d buckets", len(got.Buckets))
			}
			for le, want := range tc.buckets {
				if got.Buckets[le] != want {
					t.Errorf("bucket le=%v: %d, want %d", le, got.Buckets[le], want)
				}
			}
		})
	}
}
