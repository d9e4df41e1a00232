package kernels

import (
	"math/rand/v2"
	"time"

	"partnerapi/internal/inference/gguf"
)

// ProductProbe measures the multiply-adds per second MatMul reaches on a
// random matrix small enough to stay in the caches (4096 × 576, × 512 for
// K-quants: 1.3 MB in Q4_0, 2.5 MB in Q8_0, read from L2 and L3; smaller
// products pay more for
// the hand-off of the parallel region, 256 × 576 reaching about 55 % of
// this on Zen 3), through the worker pool as a decode step calls it. It is
// the compute ceiling of the weight products of a step whose weights are
// not the bottleneck: several streams, or a model that fits in the
// last-level cache. `bench engine` divides it by a model's multiply-adds
// per token to bound what its products alone allow, since a memory
// roofline says nothing there. The matrix is made once (NewProductProbe)
// and measured as often as the caller needs.
type ProductProbe struct {
	w      Matrix
	r      *rand.Rand
	x, dst []float32
}

// NewProductProbe makes the probe's matrix of type typ.
func NewProductProbe(typ gguf.GGMLType) (*ProductProbe, error) {
	// 576 columns (SmolLM2-135M's width), or 512 for the 256-value
	// superblocks of the K-quants.
	rows, cols := 4096, 576
	if typ.BlockSize() == QK_K {
		cols = 512
	}
	r := rand.New(rand.NewPCG(uint64(typ), 1))
	vals := make([]float32, rows*cols)
	for i := range vals {
		vals[i] = float32(r.NormFloat64())
	}
	data, err := Quantize(typ, vals)
	if err != nil {
		return nil, err
	}
	return &ProductProbe{w: Pack(Matrix{Type: typ, Rows: rows, Cols: cols, Data: data}), r: r}, nil
}

// Rate returns the multiply-adds per second of MatMul over the probe's
// matrix for n tokens, measured for about d.
func (p *ProductProbe) Rate(n int, d time.Duration) float64 {
	rows, cols := p.w.Rows, p.w.Cols
	if len(p.x) < n*cols {
		p.x, p.dst = make([]float32, n*cols), make([]float32, n*rows)
		for i := range p.x {
			p.x[i] = float32(p.r.NormFloat64())
		}
	}
	x, dst := p.x[:n*cols], p.dst[:n*rows]
	// A few calls first, so that the weights are in the caches and the
	// workers awake before the clock starts.
	for range 8 {
		MatMul(dst, p.w, x, n)
	}
	calls := 0
	start := time.Now()
	for time.Since(start) < d || calls < 4 {
		MatMul(dst, p.w, x, n)
		calls++
	}
	return float64(calls) * float64(rows*cols*n) / time.Since(start).Seconds()
}
