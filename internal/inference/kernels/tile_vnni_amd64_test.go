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
// for bit on random data of every size class: one block, a few, an odd
// count and a model's widest rows; one to three rows per call; one to ten
// tokens. The weights take every bit pattern (randomRow), the activations
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
				for n := 1; n <= maxTileTokens; n++ {
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
						tileKernels(typ, false)[n](&w.Data[0], w.RowBytes(), &plain.qs[0], &plain.d[0], &plain.corr[0], plain.nb, &want[0], 4*steps, steps)
						tileKernels(typ, true)[n](&w.Data[0], w.RowBytes(), &biased.qs[0], &biased.d[0], &biased.corr[0], biased.nb, &got[0], 4*steps, steps)
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
