//go:build !purego

package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"partnerapi/internal/inference/gguf"
)

// BenchmarkTileKernel times one tile kernel call on cache-resident data
// (one or two 576-value rows, one to ten tokens) and reports the
// multiply-adds per nanosecond of one core, the kernels' compute ceiling.
func BenchmarkTileKernel(b *testing.B) {
	if !hasAVX2 {
		b.Skip("no AVX2")
	}
	r := rand.New(rand.NewPCG(51, 52))
	const cols = 576
	for _, c := range []struct {
		typ gguf.GGMLType
		ks  tileSet
	}{{gguf.Q8_0, q8_0Tiles}, {gguf.Q4_0, q4_0Tiles}} {
		rows := append(randomRow(r, c.typ, cols), randomRow(r, c.typ, cols)...)
		rb := len(rows) / 2
		type kernel struct {
			name        string
			fn          tileKernel
			nRow, nToks int
		}
		var ks []kernel
		for _, n := range []int{4, 3, 2, 1} {
			ks = append(ks, kernel{fmt.Sprintf("2x%d", n), c.ks.two[n], 2, n})
		}
		for _, n := range []int{10, 9, 8, 5, 4, 1} {
			ks = append(ks, kernel{fmt.Sprintf("1x%d", n), c.ks.one[n], 1, n})
		}
		for _, k := range ks {
			var p q8Tiles
			p.prepare(randomVector(r, k.nToks*cols), cols, k.nToks)
			b.Run(fmt.Sprintf("%v/%s", c.typ, k.name), func(b *testing.B) {
				var out [2 * maxTileTokens]float32
				for b.Loop() {
					k.fn(&rows[0], rb, &p.qs[0], &p.d[0], &p.corr[0], p.nb, &out[0], 8, 1)
				}
				b.ReportMetric(float64(k.nRow*k.nToks*cols)*float64(b.N)/float64(b.Elapsed().Nanoseconds()), "MAC/ns")
			})
		}
		// The one-token row dot on the same two rows, for comparison with 2x1.
		one := rowDotFor(c.typ)
		var a activation
		a.prepare(actQ8_0, randomVector(r, cols))
		b.Run(fmt.Sprintf("%v/rowdot-2x1", c.typ), func(b *testing.B) {
			var sink float32
			for b.Loop() {
				sink += one(rows[:rb], &a) + one(rows[rb:], &a)
			}
			_ = sink
			b.ReportMetric(float64(2*cols)*float64(b.N)/float64(b.Elapsed().Nanoseconds()), "MAC/ns")
		})
	}
}

// BenchmarkTilePrefetchSideBySide times the weight products of a 10-token
// 135M-class decode step (weights streaming from memory) with the Q8_0
// two-row kernels as built (prefetching) and with the 2x4 kernel swapped for
// a copy that prefetches nothing, alternating within each iteration.
func BenchmarkTilePrefetchSideBySide(b *testing.B) {
	if !hasAVX2 {
		b.Skip("no AVX2")
	}
	step := newDecodeStep135M(rand.New(rand.NewPCG(67, 68)))
	orig := q8_0Tiles.two[4]
	defer func() { q8_0Tiles.two[4] = orig }()
	var prefetching, plain time.Duration
	for b.Loop() {
		t0 := time.Now()
		step.run(10)
		t1 := time.Now()
		q8_0Tiles.two[4] = q8_0Tile2x4NoPrefetch
		step.run(10)
		q8_0Tiles.two[4] = orig
		prefetching, plain = prefetching+t1.Sub(t0), plain+time.Since(t1)
	}
	b.ReportMetric(float64(plain)/float64(prefetching), "speedup")
}
