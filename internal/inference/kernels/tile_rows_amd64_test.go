//go:build !purego

package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"partnerapi/internal/inference/gguf"
)

// rowKernelPairs lists, per weight type, the one-token kernels that must
// agree bit for bit: the one-row kernel every multi-token tile matches, and
// the kernel the tile set uses for one token.
var rowKernelPairs = []struct {
	typ       gguf.GGMLType
	ref, rows tileKernel
}{
	{gguf.Q8_0, q8_0Tile1x1, q8_0Tile4x1},
	{gguf.Q4_0, q4_0Tile1x1, q4_0Tile4x1},
}

// TestTileRowsMatchOneRow holds the four-row one-token kernels to the
// one-row ones bit for bit on random data of every size class: one block, a
// few, a model's rows and its widest ones; row counts below, at and past a
// group of four with every remainder. The weights take every bit pattern
// (randomRow: -128, all nibbles), so the sign trick and the nibble
// expansion see their edge cases.
func TestTileRowsMatchOneRow(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2")
	}
	r := rand.New(rand.NewPCG(71, 72))
	for _, k := range rowKernelPairs {
		for _, cols := range []int{32, 96, 576, 4864} {
			for _, steps := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 33} {
				t.Run(fmt.Sprintf("%v/%dx%d", k.typ, steps, cols), func(t *testing.T) {
					w := randomMatrix(r, k.typ, steps, cols)
					var p q8Tiles
					p.prepareBiased(randomVector(r, cols), cols, 1, false)
					// A sentinel past the last row catches a write too many.
					want := make([]float32, steps+1)
					got := make([]float32, steps+1)
					want[steps], got[steps] = 7, 7
					k.ref(&w.Data[0], w.RowBytes(), &p.qs[0], &p.d[0], &p.corr[0], p.nb, &want[0], 4*steps, steps)
					k.rows(&w.Data[0], w.RowBytes(), &p.qs[0], &p.d[0], &p.corr[0], p.nb, &got[0], 4*steps, steps)
					for i := range want {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("row %d: four-row kernel %v, one-row %v", i, got[i], want[i])
						}
					}
				})
			}
		}
	}
}

// BenchmarkTileRows times the one-token kernels, one-row and four-row side
// by side (run with -count n: the pairs alternate), over a whole matrix in
// one call as a decode step makes it: 64 rows of 576 values, which stay in
// cache, and a matrix of about 100 MB (Q8_0), which streams from DRAM. It
// reports multiply-adds per ns of wall time and, where the OS tells, of the
// thread's CPU time.
func BenchmarkTileRows(b *testing.B) {
	if !hasAVX2 {
		b.Skip("no AVX2")
	}
	r := rand.New(rand.NewPCG(73, 74))
	const cols = 576
	for _, size := range []struct {
		name string
		rows int
	}{{"cache", 64}, {"dram", 160 << 10}} {
		for _, k := range rowKernelPairs {
			w := randomMatrix(r, k.typ, size.rows, cols)
			var p q8Tiles
			p.prepareBiased(randomVector(r, cols), cols, 1, false)
			out := make([]float32, size.rows)
			for _, v := range []struct {
				name string
				fn   tileKernel
			}{{"1row", k.ref}, {"4rows", k.rows}} {
				b.Run(fmt.Sprintf("%s/%v/%s", size.name, k.typ, v.name), func(b *testing.B) {
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
					cpu0 := threadCPU()
					for b.Loop() {
						v.fn(&w.Data[0], w.RowBytes(), &p.qs[0], &p.d[0], &p.corr[0], p.nb, &out[0], 4*size.rows, size.rows)
					}
					macs := float64(size.rows*cols) * float64(b.N)
					b.ReportMetric(macs/float64(b.Elapsed().Nanoseconds()), "MAC/ns")
					if cpu := threadCPU() - cpu0; cpu > 0 {
						b.ReportMetric(macs/float64(cpu.Nanoseconds()), "MAC/cpu-ns")
					}
				})
			}
		}
	}
}
