//go:build !purego

package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"partnerapi/internal/inference/gguf"
)

// TestMatMulManyMixedKGroups runs one MatMulMany over Q4_K, Q2_K and Q6_K
// matrices sharing their input: under the AVX-512 family Q2_K is packed in
// the AVX2 family's 8-row groups and its kernels read Q8_K activations in
// groups of four tokens, the others in groups of ten, so one activation
// buffer holds both layouts. Every product must equal its Go row dot bit
// for bit, for every token count either layout splits differently.
func TestMatMulManyMixedKGroups(t *testing.T) {
	forEachPackedPath(t, func(t *testing.T) {
		if !packsQ2K() || !packsKQuant(gguf.Q4_K) {
			t.Skip("this family does not pack Q2_K and Q4_K")
		}
		r := rand.New(rand.NewPCG(113, 114))
		const cols = 512
		ref := map[gguf.GGMLType]rowDot{gguf.Q4_K: dotQ4KGo, gguf.Q6_K: dotQ6KGo, gguf.Q2_K: dotQ2KGo}
		var ws []Matrix
		for _, typ := range []gguf.GGMLType{gguf.Q4_K, gguf.Q2_K, gguf.Q6_K} {
			w := Pack(Matrix{Type: typ, Rows: 48, Cols: cols, Data: randomRow(r, typ, 48*cols)})
			if !packedKQuant(w) {
				t.Fatalf("%v: Pack did not pack", typ)
			}
			ws = append(ws, w)
		}
		if packGroup == packGroupK && ws[1].packedGroup != packGroupKAVX2 {
			t.Fatalf("Q2_K packed in groups of %d under the AVX-512 family", ws[1].packedGroup)
		}
		for _, n := range []int{1, 3, 4, 5, 9, 10, 11, 23} {
			x := randomVector(r, n*cols)
			acts := make([]activation, n)
			for i := range acts {
				acts[i].prepare(actQ8_K, x[i*cols:(i+1)*cols])
			}
			ops := make([]MatMulOp, len(ws))
			for i, w := range ws {
				ops[i] = MatMulOp{Dst: make([]float32, n*w.Rows), W: w}
			}
			MatMulMany(ops, x, n)
			for _, op := range ops {
				w := op.W
				want := func(tok, row int) float32 { return ref[w.Type](w.Row(row), &acts[tok]) }
				checkBits(t, fmt.Sprintf("%v/tokens%d", w.Type, n), op.Dst, w.Rows, n, 0, w.Rows, want)
			}
		}
	})
}
