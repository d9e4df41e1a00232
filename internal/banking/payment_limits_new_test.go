package banking

import (
	"math"
	"testing"
)

// NewOpLimiter refuses the rates and bursts that would make the limiter
// refuse every operation for good once a burst is spent (a negative rate,
// which never refills; NaN), so that the service stops at start naming its
// flag; 0 stays "unlimited".
func TestNewOpLimiterRefusesBrokenLimits(t *testing.T) {
	for _, tc := range []struct {
		rate  float64
		burst int
		ok    bool
	}{
		{0, 0, true},
		{10, 20, true},
		{0.5, 1, true},
		{math.Inf(1), 1, true},
		{-1, 20, false},
		{-0.001, 20, false},
		{math.NaN(), 20, false},
		{10, -1, false},
	} {
		l, err := NewOpLimiter(tc.rate, tc.burst)
		if (err == nil) != tc.ok {
			t.Fatalf("rate %v burst %d: %v, want ok=%v", tc.rate, tc.burst, err, tc.ok)
		}
		if !tc.ok {
			continue
		}
		// An accepted limiter lets a token's first call through.
		if err := l.Allow("token", "op"); err != nil {
			t.Fatalf("rate %v burst %d: first call refused: %v", tc.rate, tc.burst, err)
		}
	}
}
