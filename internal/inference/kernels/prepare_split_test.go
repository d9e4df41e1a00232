package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"partnerapi/internal/inference/gguf"
)

// TestPrepareSplitMatchesSerial checks that quantising activations over the
// worker pool gives the same bytes as one goroutine: token groups of every
// size, inputs on both sides of the threshold, each combination of the
// passes.
func TestPrepareSplitMatchesSerial(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, cols := range []int{288, 576, 1536, 4864} {
		for _, n := range []int{1, 3, 10, 11, 23, 64, 256} {
			x := randomVector(r, n*cols)
			for _, mode := range []struct{ biased, withCQ, sums bool }{{false, false, true}, {false, true, true}, {true, true, false}, {false, true, false}} {
				t.Run(fmt.Sprintf("%dx%d/%+v", n, cols, mode), func(t *testing.T) {
					var split, serial q8Tiles
					split.prepareSplit(x, cols, n, mode.biased, mode.withCQ, mode.sums)
					old := prepareParallelMin
					prepareParallelMin = math.MaxInt
					serial.prepareSplit(x, cols, n, mode.biased, mode.withCQ, mode.sums)
					prepareParallelMin = old
					nb := cols / QK8_0
					if !slices.Equal(split.qs[:n*cols], serial.qs[:n*cols]) || !slices.Equal(split.d[:n*nb], serial.d[:n*nb]) ||
						!slices.Equal(split.corr[:n*cols/2], serial.corr[:n*cols/2]) {
						t.Fatal("quantised values differ")
					}
					if mode.withCQ && !slices.Equal(split.cq[:n*nb], serial.cq[:n*nb]) {
						t.Fatal("offset corrections differ")
					}
					if mode.sums && (!slices.Equal(split.c8, serial.c8) || !slices.Equal(split.c4, serial.c4) ||
						!slices.Equal(split.c16, serial.c16) || !slices.Equal(split.ms, serial.ms)) {
						t.Fatal("block sums differ")
					}
					if split.biased != mode.biased || split.hasCQ != mode.withCQ {
						t.Fatal("flags differ")
					}
				})
			}
		}
	}
}

// TestPrepareSplitMatchesTokenByToken pins the layout itself: every
// token's blocks, quantised alone in the plain layout, appear where the
// tiled layout puts them.
func TestPrepareSplitMatchesTokenByToken(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const cols, n = 4864, 23
	nb := cols / QK8_0
	x := randomVector(r, n*cols)
	var p q8Tiles
	p.prepareSplit(x, cols, n, false, true, true)
	tileGroups(n, func(t0, T int) {
		for k := range T {
			qs, d, corr, sums := make([]int8, cols), make([]float32, nb), make([]int16, cols/2), make([]int32, nb)
			quantizeQ8BlocksGo(x[(t0+k)*cols:(t0+k+1)*cols], qs, QK8_0, d, 1, corr, sums)
			for b := range nb {
				i := t0*nb + T*b + k
				if !slices.Equal(p.qs[QK8_0*i:QK8_0*(i+1)], qs[QK8_0*b:QK8_0*(b+1)]) || p.d[i] != d[b] || p.sums[i] != sums[b] {
					t.Fatalf("token %d block %d not at chunk %d", t0+k, b, i)
				}
			}
		}
	})
}

// BenchmarkPrepareSplitSideBySide times whole products with the activation
// passes split over the worker pool and on the caller alone, alternating
// within each iteration so both see the same machine load: a 135M-class
// layer's products (576 wide, the down projection 1 536) for a 256-token
// prompt and for ten streams, and a 0.5B-class layer's (896, 4 864) for
// ten streams and a 64-token chunk. It reports each side's median time and
// split ÷ serial (< 1 when splitting is faster).
func BenchmarkPrepareSplitSideBySide(b *testing.B) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, typ := range []gguf.GGMLType{gguf.Q8_0, gguf.Q4_0} {
		for _, sh := range []struct {
			name      string
			E, KV, FF int
			tokens    []int
		}{{"135m", 576, 192, 1536, []int{10, 256}}, {"0.5b", 896, 128, 4864, []int{10, 64}}} {
			var ws []Matrix
			for _, s := range [][2]int{{sh.E, sh.E}, {sh.KV, sh.E}, {sh.KV, sh.E}, {sh.E, sh.E}, {sh.FF, sh.E}, {sh.FF, sh.E}, {sh.E, sh.FF}} {
				ws = append(ws, randomMatrix(r, typ, s[0], s[1]))
			}
			for _, n := range sh.tokens {
				x := randomVector(r, n*sh.FF)
				dst := make([]float32, n*sh.FF)
				layer := func() {
					for _, w := range ws {
						MatMul(dst[:n*w.Rows], w, x[:n*w.Cols], n)
					}
				}
				b.Run(fmt.Sprintf("%v/%s/tokens=%d", typ, sh.name, n), func(b *testing.B) {
					defer SetPrepareSplit(true)
					sideBySide(b, []string{"split", "serial"}, layer, func() {
						SetPrepareSplit(false)
						layer()
						SetPrepareSplit(true)
					})
				})
			}
		}
	}
}

// TestKTilesPrepareSplitMatchesSerial is TestPrepareSplitMatchesSerial for
// the Q8_K activations of the packed K-quant kernels and their sums.
func TestKTilesPrepareSplitMatchesSerial(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, cols := range []int{256, 1024, 4864 / 256 * 256} {
		for _, n := range []int{1, 4, 10, 23, 64} {
			for _, most := range []int{4, 10} {
				x := randomVector(r, n*cols)
				t.Run(fmt.Sprintf("%dx%d/most=%d", n, cols, most), func(t *testing.T) {
					var split, serial kTiles
					split.prepare(x, cols, n, most)
					old := prepareParallelMin
					prepareParallelMin = math.MaxInt
					serial.prepare(x, cols, n, most)
					s4, s6 := serial.sums(gguf.Q4_K), serial.sums(gguf.Q6_K)
					prepareParallelMin = old
					if !slices.Equal(split.qs, serial.qs) || !slices.Equal(split.d, serial.d) {
						t.Fatal("quantised values differ")
					}
					if !slices.Equal(split.sums(gguf.Q4_K), s4) || !slices.Equal(split.sums(gguf.Q6_K), s6) {
						t.Fatal("sums differ")
					}
				})
			}
		}
	}
}
