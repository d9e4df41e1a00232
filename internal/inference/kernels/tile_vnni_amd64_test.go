//go:build !purego

package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"partnerapi/internal/inference/gguf"
)

// TestTileVNNIMatchesAVX2 holds every VNNI tile kernel to its AVX2 twin bit
// for bit (for Q4_0 the Exact one-token kernel, token by token: the AVX2
// Q4_0 tiles take the offset out of the integers and round differently) on random data of every size class: one block, a few, an odd
// count and a model's widest rows; one to three rows per call; two to ten
// tokens (one token always takes the AVX2 kernel). The weights take every bit pattern (randomRow), the activations
// reach ±127 after quantisation, so both ends of the bias are exercised.
func TestTileVNNIMatchesAVX2(t *testing.T) {
	if !cpuVNNI {
		t.Skip("this CPU has no AVX-512 VNNI with VL: only the AVX2 tiles can run")
	}
	r := rand.New(rand.NewPCG(61, 62))
	for _, typ := range []gguf.GGMLType{gguf.Q8_0, gguf.Q4_0} {
		for _, cols := range []int{32, 96, 224, 576, 4864} {
			for _, steps := range []int{1, 3} {
				w := randomMatrix(r, typ, steps, cols)
				for n := 2; n <= maxTileTokens; n++ {
					t.Run(fmt.Sprintf("%v/%dx%d/tokens%d", typ, steps, cols, n), func(t *testing.T) {
						x := randomVector(r, n*cols)
						// One token of extreme values, so that x+128 reaches 1
						// and 255.
						for i := 0; i < cols; i += 2 {
							x[i], x[i+1] = 3, -3
						}
						var plain, biased q8Tiles
						plain.prepareBiased(x, cols, n, false)
						biased.prepareBiased(x, cols, n, true)
						want := make([]float32, n*steps)
						got := make([]float32, n*steps)
						if typ == gguf.Q4_0 {
							for k := range n {
								var one q8Tiles
								one.prepareBiased(x[k*cols:(k+1)*cols], cols, 1, false)
								q4_0Tile8x1Exact(&w.Data[0], w.RowBytes(), &one.qs[0], &one.d[0], &one.corr[0], one.nb, &want[k*steps], 4, steps)
							}
						} else {
							tileKernels(typ, false)[n](&w.Data[0], w.RowBytes(), &plain.qs[0], &plain.d[0], &plain.cq[0], plain.nb, &want[0], 4*steps, steps)
						}
						tileKernels(typ, true)[n](&w.Data[0], w.RowBytes(), &biased.qs[0], &biased.d[0], &biased.cq[0], biased.nb, &got[0], 4*steps, steps)
						for i := range want {
							if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
								t.Fatalf("token %d row %d: VNNI %v, AVX2 %v", i/steps, i%steps, got[i], want[i])
							}
						}
					})
				}
			}
		}
	}
}

// TestKQuantVNNIMatchesAVX2 holds the VNNI Q4_K and Q6_K block kernels, one
// token and four, to the AVX2 ones: their integer sums must be equal, on
// blocks with every bit pattern and activations across the int8 range.
func TestKQuantVNNIMatchesAVX2(t *testing.T) {
	if !cpuVNNI {
		t.Skip("this CPU has no AVX-512 VNNI with VL: only the AVX2 kernels can run")
	}
	r := rand.New(rand.NewPCG(63, 64))
	for i := range 200 {
		q4 := randomBytes(r, BlockQ4_K)
		q6 := randomBytes(r, BlockQ6_K)
		var xs [4][]int8
		var xp [4]*int8
		for k := range xs {
			xs[k] = make([]int8, QK_K)
			for j := range xs[k] {
				xs[k][j] = int8(r.IntN(255) - 127)
			}
			xp[k] = &xs[k][0]
		}
		var sc [8]int16
		for j := range sc {
			sc[j] = int16(r.IntN(64))
		}
		if a, v := q4KBlockAVX2(&q4[16], xp[0], &sc), q4KBlockVNNI(&q4[16], xp[0], &sc); a != v {
			t.Fatalf("block %d: Q4_K AVX2 %d, VNNI %d", i, a, v)
		}
		if a, v := q6KBlockAVX2(&q6[0], xp[0]), q6KBlockVNNI(&q6[0], xp[0]); a != v {
			t.Fatalf("block %d: Q6_K AVX2 %d, VNNI %d", i, a, v)
		}
		var a4, v4 [4]int32
		q4KBlockX4AVX2(&q4[16], &xp, &sc, &a4)
		q4KBlockX4VNNI(&q4[16], &xp, &sc, &v4)
		if a4 != v4 {
			t.Fatalf("block %d: four-token Q4_K AVX2 %v, VNNI %v", i, a4, v4)
		}
		q6KBlockX4AVX2(&q6[0], &xp, &a4)
		q6KBlockX4VNNI(&q6[0], &xp, &v4)
		if a4 != v4 {
			t.Fatalf("block %d: four-token Q6_K AVX2 %v, VNNI %v", i, a4, v4)
		}
	}
}
