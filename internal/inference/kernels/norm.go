package kernels

// The two halves of RMS normalisation. The sum of squares runs in float64
// as llama.cpp's does (a float32 sum over thousands of values loses digits
// the normalised row then shows), but not as one dependency chain: a chain
// of 576 double additions is ~2300 cycles of latency per row, and ten
// streams of SmolLM2-135M normalise 600 rows per step, 4–5 % of a
// ten-stream step's CPU before this kernel. The squares go into sixteen
// lane sums (element i into lane i mod 16 of the full sixteen-value
// stretches) combined in a fixed order, then the tail in order, so the Go
// and assembly versions give the same bits: a square of a float32 is exact
// in float64, so fused and separate multiply-adds agree.

var (
	sumSquaresF64 = sumSquaresF64Go
	scaleMulF32   = scaleMulF32Go
)

// SumSquaresF64 is Σ x[i]² summed in float64.
func SumSquaresF64(x []float32) float64 { return sumSquaresF64(x) }

// ScaleMulF32 sets dst[i] = (src[i]·s)·w[i] for i < len(src), the second
// half of RMS normalisation, rounding as the Go expression does.
func ScaleMulF32(dst, src, w []float32, s float32) {
	if len(src) == 0 {
		return
	}
	scaleMulF32(dst[:len(src)], src, w[:len(src)], s)
}

func sumSquaresF64Go(x []float32) float64 {
	var lanes [16]float64
	n := len(x) &^ 15
	for i := 0; i < n; i += 16 {
		for j := range 16 {
			v := float64(x[i+j])
			lanes[j] += v * v
		}
	}
	// The combination order of the assembly: the four four-lane
	// accumulators pairwise, then the four lanes of the result pairwise.
	var acc [4]float64
	for j := range 4 {
		acc[j] = (lanes[j] + lanes[4+j]) + (lanes[8+j] + lanes[12+j])
	}
	s := (acc[0] + acc[2]) + (acc[1] + acc[3])
	for _, v := range x[n:] {
		s += float64(v) * float64(v)
	}
	return s
}

func scaleMulF32Go(dst, src, w []float32, s float32) {
	for i, v := range src {
		dst[i] = v * s * w[i]
	}
}
