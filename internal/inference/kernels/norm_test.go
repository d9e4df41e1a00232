package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestNormKernels holds the dispatched norm kernels (assembly where the CPU
// has it) to the Go versions bit for bit, and the sum of squares to a
// sequential float64 sum within rounding, on every length class: empty,
// tails only, whole sixteen-value stretches and both.
func TestNormKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for _, n := range []int{0, 1, 3, 8, 15, 16, 17, 31, 48, 64, 288, 576, 577, 896, 4864} {
		x := randomVector(r, n)
		for i := range x {
			x[i] *= float32(1 + 50*r.Float64())
		}
		got, want := SumSquaresF64(x), sumSquaresF64Go(x)
		if got != want {
			t.Errorf("n=%d: SumSquaresF64 = %v, Go version %v", n, got, want)
		}
		var seq float64
		for _, v := range x {
			seq += float64(v) * float64(v)
		}
		if math.Abs(got-seq) > 1e-12*seq {
			t.Errorf("n=%d: SumSquaresF64 = %v, sequential sum %v", n, got, seq)
		}
		w := randomVector(r, n)
		s := float32(r.Float64() * 3)
		dst, ref := make([]float32, n+1), make([]float32, n+1)
		dst[n], ref[n] = 7, 7 // the value past the end must survive
		ScaleMulF32(dst, x, w, s)
		scaleMulF32Go(ref[:n], x, w, s)
		for i := range ref {
			if dst[i] != ref[i] {
				t.Fatalf("n=%d: ScaleMulF32[%d] = %v, Go version %v", n, i, dst[i], ref[i])
			}
		}
	}
}
