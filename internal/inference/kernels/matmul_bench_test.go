package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

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
	for _, typ := range []gguf.GGMLType{gguf.Q8_0, gguf.Q4_0, gguf.Q2_K, gguf.Q3_K, gguf.Q4_K, gguf.Q6_K, gguf.F16, gguf.F32} {
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
	tiled, q4k, q6k, f16, f16x2, f32 := tiledMulRows, dot4Q4K, dot4Q6K, dot4F16, dot2x4F16, dot4F32
	tiledMulRows, dot4Q4K, dot4Q6K, dot4F16, dot2x4F16, dot4F32 = nil, nil, nil, nil, nil, nil
	return func() { tiledMulRows, dot4Q4K, dot4Q6K, dot4F16, dot2x4F16, dot4F32 = tiled, q4k, q6k, f16, f16x2, f32 }
}

// BenchmarkBatchKernelsSideBySide times the same product with the batched
// kernels (tiled Q8_0/Q4_0, four-token K-quants and F16) and with the
// one-token row dots, alternating within each iteration so both see the
// same machine load, on a 0.5B-class FFN projection (4864×896; 1024 columns
// for the K-quants).
func BenchmarkBatchKernelsSideBySide(b *testing.B) {
	r := rand.New(rand.NewPCG(35, 36))
	for _, typ := range []gguf.GGMLType{gguf.Q8_0, gguf.Q4_0, gguf.Q4_K, gguf.Q6_K, gguf.F16} {
		cols := 896
		if typ.BlockSize() == QK_K {
			cols = 1024
		}
		w := Pack(Matrix{Type: typ, Rows: 4864, Cols: cols, Data: randomRow(r, typ, 4864*cols)})
		for _, tokens := range []int{1, 10, 64} {
			x := randomVector(r, tokens*cols)
			dst := make([]float32, tokens*w.Rows)
			b.Run(fmt.Sprintf("%v/tokens=%d", typ, tokens), func(b *testing.B) {
				var batched, rowDots time.Duration
				for b.Loop() {
					t0 := time.Now()
					MatMul(dst, w, x, tokens)
					t1 := time.Now()
					restore := withoutBatchKernels()
					MatMul(dst, w, x, tokens)
					restore()
					batched, rowDots = batched+t1.Sub(t0), rowDots+time.Since(t1)
				}
				b.ReportMetric(float64(batched.Nanoseconds())/float64(b.N), "ns-batched/op")
				b.ReportMetric(float64(rowDots.Nanoseconds())/float64(b.N), "ns-rowdots/op")
				b.ReportMetric(float64(rowDots)/float64(batched), "speedup")
			})
		}
	}
}
