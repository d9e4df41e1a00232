package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"partnerapi/internal/inference/gguf"
)

// BenchmarkMatMulTokens measures the multi-token product, the kernel behind
// both batched prefill (64-token chunks) and batched decode (one token per
// sequence), on a 135M-class FFN projection (1536 rows of 576 values; the
// K-quants use 512 columns since 576 is not a multiple of 256). It reports
// GFLOP/s (2 per multiply-add) and GB/s of weights, so benchstat can compare
// runs.
func BenchmarkMatMulTokens(b *testing.B) {
	r := rand.New(rand.NewPCG(31, 32))
	for _, typ := range []gguf.GGMLType{gguf.Q8_0, gguf.Q4_0, gguf.Q4_K, gguf.Q6_K, gguf.F16, gguf.F32} {
		cols := 576
		if typ.BlockSize() == QK_K {
			cols = 512
		}
		w := randomMatrix(r, typ, 1536, cols)
		for _, tokens := range []int{1, 4, 10, 64} {
			x := randomVector(r, tokens*cols)
			dst := make([]float32, tokens*w.Rows)
			b.Run(fmt.Sprintf("%v/tokens=%d", typ, tokens), func(b *testing.B) {
				for b.Loop() {
					MatMul(dst, w, x, tokens)
				}
				reportRates(b, w, tokens)
			})
			if tiledType(typ) || rowDot4For(typ) != nil {
				// The one-token row dots the batched kernels replaced, side
				// by side.
				b.Run(fmt.Sprintf("%v/tokens=%d/rowdots", typ, tokens), func(b *testing.B) {
					defer withoutBatchKernels()()
					for b.Loop() {
						MatMul(dst, w, x, tokens)
					}
					reportRates(b, w, tokens)
				})
			}
		}
	}
}

// BenchmarkMatMulManyQKV compares three MatMul calls with one MatMulMany for
// the Q/K/V projections of a 135M-class layer (576→576, 576→192, 576→192).
func BenchmarkMatMulManyQKV(b *testing.B) {
	r := rand.New(rand.NewPCG(33, 34))
	for _, tokens := range []int{1, 10} {
		ops := []MatMulOp{
			{W: randomMatrix(r, gguf.Q8_0, 576, 576)},
			{W: randomMatrix(r, gguf.Q8_0, 192, 576)},
			{W: randomMatrix(r, gguf.Q8_0, 192, 576)},
		}
		for i := range ops {
			ops[i].Dst = make([]float32, tokens*ops[i].W.Rows)
		}
		x := randomVector(r, tokens*576)
		b.Run(fmt.Sprintf("separate/tokens=%d", tokens), func(b *testing.B) {
			for b.Loop() {
				for _, op := range ops {
					MatMul(op.Dst, op.W, x, tokens)
				}
			}
		})
		b.Run(fmt.Sprintf("many/tokens=%d", tokens), func(b *testing.B) {
			for b.Loop() {
				MatMulMany(ops, x, tokens)
			}
		})
	}
}

func reportRates(b *testing.B, w Matrix, tokens int) {
	s := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(2*float64(w.Rows)*float64(w.Cols)*float64(tokens)/s/1e9, "GFLOP/s")
	b.ReportMetric(float64(len(w.Data))/s/1e9, "GB/s")
}

// withoutBatchKernels switches the multi-token kernels off, leaving the
// one-token row dots, and returns the function that switches them back.
func withoutBatchKernels() (restore func()) {
	tiled, q4k, q6k, f16 := tiledMulRows, dot4Q4K, dot4Q6K, dot4F16
	tiledMulRows, dot4Q4K, dot4Q6K, dot4F16 = nil, nil, nil, nil
	return func() { tiledMulRows, dot4Q4K, dot4Q6K, dot4F16 = tiled, q4k, q6k, f16 }
}
