package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"partnerapi/internal/inference/gguf"
)

// TestMatMulManyMatchesMatMul holds MatMulMany to MatMul bit for bit: mixed
// weight types (so several activation kinds are prepared in one call), op
// sizes that make worker shares straddle op boundaries, and token counts on
// both sides of the four-token kernels.
func TestMatMulManyMatchesMatMul(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	groups := [][]gguf.GGMLType{
		{gguf.F32}, {gguf.F16}, {gguf.BF16}, {gguf.Q8_0}, {gguf.Q4_0}, {gguf.Q5_0}, {gguf.Q4_K}, {gguf.Q5_K}, {gguf.Q6_K},
		{gguf.Q8_0, gguf.Q8_0, gguf.Q8_0},
		{gguf.Q4_0, gguf.Q4_K, gguf.Q6_K, gguf.F16, gguf.F32, gguf.BF16, gguf.Q8_0},
	}
	rowCounts := []int{1, 67, 130, 3, 512, 9, 250}
	for _, cols := range []int{256, 768} {
		for _, tokens := range []int{1, 3, 4, 9} {
			for _, types := range groups {
				t.Run(fmt.Sprintf("%v/cols%d/tokens%d", types, cols, tokens), func(t *testing.T) {
					x := randomVector(r, tokens*cols)
					ops := make([]MatMulOp, len(types))
					for i, typ := range types {
						w := randomMatrix(r, typ, rowCounts[i%len(rowCounts)]+i, cols)
						ops[i] = MatMulOp{Dst: make([]float32, tokens*w.Rows), W: w}
					}
					MatMulMany(ops, x, tokens)
					for i, op := range ops {
						want := make([]float32, len(op.Dst))
						MatMul(want, op.W, x, tokens)
						for j := range want {
							if math.Float32bits(want[j]) != math.Float32bits(op.Dst[j]) {
								t.Fatalf("op %d (%v) value %d: MatMulMany %v, MatMul %v", i, op.W.Type, j, op.Dst[j], want[j])
							}
						}
					}
				})
			}
		}
	}
}

func TestMatMulManyRejectsMismatchedShapes(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	a := randomMatrix(r, gguf.Q8_0, 4, 64)
	b := randomMatrix(r, gguf.Q8_0, 4, 96)
	for name, ops := range map[string][]MatMulOp{
		"cols differ":   {{Dst: make([]float32, 4), W: a}, {Dst: make([]float32, 4), W: b}},
		"dst too short": {{Dst: make([]float32, 3), W: a}},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			MatMulMany(ops, make([]float32, 64), 1)
		})
	}
	MatMulMany(nil, nil, 1) // no ops is a no-op
}
