package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"partnerapi/internal/inference/hugepage"
)

// BenchmarkHugeSideBySide times, alternating in one process, the same
// work over one buffer from hugepage.Make and over one plain heap buffer
// (4 KB pages): a 135M-class step's weight products for one and ten tokens
// (BenchmarkDecodeStep135M's, every packed matrix in one buffer as the
// model loader keeps them), and the attention of a ten-stream decode step
// over int8 caches of 320 positions (BenchmarkAttnQ8DecodeStep's shapes,
// each stream's caches in one buffer), which on the Zen 3 host measured
// 0.95–1.03 and so stays in 4 KB pages.
func BenchmarkHugeSideBySide(b *testing.B) {
	defer hugepage.SetEnabled(true)
	const span, seqs = 320, 10
	for _, shape := range attnStepShapes {
		r := rand.New(rand.NewPCG(1, 9))
		hd, g, n := shape.hd, shape.g, KVCapacity(span)*shape.hd
		caches := shape.layers * shape.kvHeads
		type kv struct{ k, v [][]int8 }
		var sides [2]kv
		ks, vs := make([][]float32, seqs*caches), make([][]float32, seqs*caches)
		for i := range seqs * caches {
			_, ks[i], _ = q8KeyCache(r, span, hd)
			_, vs[i], _ = q8Cache(r, span, hd)
		}
		for side := range sides {
			hugepage.SetEnabled(side == 0)
			for range seqs {
				buf := hugepage.Make[int8](2 * caches * n)
				for c := range caches {
					k, v := buf[2*c*n:(2*c+1)*n], buf[(2*c+1)*n:(2*c+2)*n]
					for i := range k {
						k[i], v[i] = int8(r.IntN(255)-127), int8(r.IntN(255)-127)
					}
					sides[side].k, sides[side].v = append(sides[side].k, k), append(sides[side].v, v)
				}
			}
		}
		q, out := randomVector(r, g*hd), make([]float32, g*hd)
		scores := make([]float32, g*span)
		attend := func(c kv) func() {
			return func() {
				for i := range c.k {
					AttnScoresGroupQ8(scores, q, c.k[i], ks[i], c.v[i], hd, 0, span, 0.125)
					for j := range g {
						Softmax(scores[j*span : (j+1)*span])
					}
					AttnWeightedSumGroupQ8(out, scores, c.v[i], vs[i], hd, span)
				}
			}
		}
		b.Run("attention/"+shape.name, func(b *testing.B) {
			sideBySide(b, []string{"huge", "small"}, attend(sides[0]), attend(sides[1]))
		})
	}
	step := newDecodeStep135M(rand.New(rand.NewPCG(61, 62)))
	var huge []*decodeStep
	for side := range 2 {
		hugepage.SetEnabled(side == 0)
		total := 0
		for _, ly := range step.layers {
			for _, w := range ly {
				total += len(w.packed)
			}
		}
		buf := hugepage.Make[byte](total)
		s := &decodeStep{x: step.x, out: step.out}
		for _, ly := range step.layers {
			var c [7]Matrix
			for i, w := range ly {
				c[i] = w
				c[i].packed = buf[:len(w.packed):len(w.packed)]
				copy(c[i].packed, w.packed)
				buf = buf[len(w.packed):]
			}
			s.layers = append(s.layers, c)
		}
		huge = append(huge, s)
	}
	for _, n := range []int{1, 10} {
		b.Run(fmt.Sprintf("weights/tokens=%d", n), func(b *testing.B) {
			sideBySide(b, []string{"huge", "small"}, func() { huge[0].run(n) }, func() { huge[1].run(n) })
		})
	}
}
