package kernels

import (
	"math"
	"testing"
	"time"

	"partnerapi/internal/inference/gguf"
)

// TestProductProbeMeasures checks the ceiling `bench engine` reports is a
// measurement: a positive, finite rate for one token and for ten. How the
// two compare is a speed, and speed is for the benchmarks: an earlier
// version also wanted ten tokens faster than one with the assembly (ten
// reuse each weight from registers), and failed in CI when the packages
// tested beside it took the cores (Q8_0 38.7 G multiply-adds/s for ten
// against 45.8 for one, where a quiet run gives 100 against 68).
func TestProductProbeMeasures(t *testing.T) {
	for _, typ := range []gguf.GGMLType{gguf.Q8_0, gguf.Q4_0} {
		p, err := NewProductProbe(typ)
		if err != nil {
			t.Fatal(err)
		}
		one, ten := p.Rate(1, 20*time.Millisecond), p.Rate(10, 20*time.Millisecond)
		t.Logf("%v: %.1f G multiply-adds/s for one token, %.1f for ten", typ, one/1e9, ten/1e9)
		for _, r := range []float64{one, ten} {
			if !(r > 0) || math.IsInf(r, 0) {
				t.Errorf("%v: rates %.3g (one token) and %.3g (ten): want positive and finite", typ, one, ten)
			}
		}
	}
}
