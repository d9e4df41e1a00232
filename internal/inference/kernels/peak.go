package kernels

import (
	"math/rand/v2"
	"time"

	"partnerapi/internal/inference/gguf"
)

// ProductRate measures the multiply-adds per second MatMul reaches for n
// tokens on a random matrix of type typ small enough to stay in the caches
// (4096 × 576: 1.3 MB in Q4_0, 2.5 MB in Q8_0, read from L2 and L3;
// smaller products pay more for the hand-off of the parallel region,
// 256 × 576 reaching about 55 % of this on Zen 3), through the worker pool as
// a decode step calls it, for about d. It is the compute ceiling of the
// weight products of a step whose weights are not the bottleneck: several
// streams, or a model that fits in the last-level cache. `bench engine`
// divides it by a model's multiply-adds per token to bound what its
// products alone allow, since a memory roofline says nothing there.
func ProductRate(typ gguf.GGMLType, n int, d time.Duration) (float64, error) {
	const rows, cols = 4096, 576
	r := rand.New(rand.NewPCG(uint64(typ), uint64(n)))
	vals := make([]float32, rows*cols)
	for i := range vals {
		vals[i] = float32(r.NormFloat64())
	}
	data, err := Quantize(typ, vals)
	if err != nil {
		return 0, err
	}
	w := Pack(Matrix{Type: typ, Rows: rows, Cols: cols, Data: data})
	x := make([]float32, n*cols)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	dst := make([]float32, n*rows)
	// A few calls first, so that the weights are in the caches and the
	// workers awake before the clock starts.
	for range 8 {
		MatMul(dst, w, x, n)
	}
	calls := 0
	start := time.Now()
	for time.Since(start) < d || calls < 4 {
		MatMul(dst, w, x, n)
		calls++
	}
	return float64(calls) * rows * cols * float64(n) / time.Since(start).Seconds(), nil
}
