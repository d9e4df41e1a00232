//go:build !purego

package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"partnerapi/internal/inference/gguf"
)

// exactKernel is the signature of the Q4_0 kernels over the 8·x pair sums
// (q4_0Tile1x1Exact), which the VNNI tiles match.
type exactKernel = func(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)

// plainKernel is tileKernel's signature unnamed, the dynamic type of a
// kernel function in an interface.
type plainKernel = func(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)

// rowKernels lists, per weight type, the one-token kernels that must agree
// bit for bit with their one-row kernel (ref), which every multi-token tile
// of the family matches. fn and ref are tileKernels or exactKernels.
var rowKernels = []struct {
	typ     gguf.GGMLType
	name    string
	fn, ref any
}{
	{gguf.Q8_0, "4rows", q8_0Tile4x1, q8_0Tile1x1},
	{gguf.Q8_0, "8rows", q8_0Tile8x1, q8_0Tile1x1},
	{gguf.Q4_0, "4rows", q4_0Tile4x1, q4_0Tile1x1},
	{gguf.Q4_0, "8rows", q4_0Tile8x1, q4_0Tile1x1},
	{gguf.Q4_0, "8rows-exact", q4_0Tile8x1Exact, q4_0Tile1x1Exact},
}

// callRows runs a tileKernel or exactKernel over steps rows of w (stride
// bytes apart) and the one-token activation p, each with its corrections.
func callRows(fn any, w *byte, stride int, p *q8Tiles, out *float32, ostride, steps int) {
	switch f := fn.(type) {
	case plainKernel:
		f(w, stride, &p.qs[0], &p.d[0], &p.cq[0], p.nb, out, ostride, steps)
	case exactKernel:
		f(w, stride, &p.qs[0], &p.d[0], &p.corr[0], p.nb, out, ostride, steps)
	default:
		panic(fmt.Sprintf("not a kernel: %T", fn))
	}
}

// TestTileRowsMatchOneRow holds the multi-row one-token kernels to the
// one-row ones bit for bit on random data of every size class: one block, a
// few, a model's rows and its widest ones; row counts below, at and past
// groups of four and eight with every remainder (13 = 8 + 4 + 1). The
// weights take every bit pattern (randomRow: -128, all nibbles), so the
// sign trick and the nibble expansion see their edge cases.
func TestTileRowsMatchOneRow(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2")
	}
	r := rand.New(rand.NewPCG(71, 72))
	for _, k := range rowKernels {
		for _, cols := range []int{32, 96, 576, 4864} {
			for _, steps := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 33} {
				t.Run(fmt.Sprintf("%v/%s/%dx%d", k.typ, k.name, steps, cols), func(t *testing.T) {
					w := randomMatrix(r, k.typ, steps, cols)
					var p q8Tiles
					p.prepareBiased(randomVector(r, cols), cols, 1, false)
					// A sentinel past the last row catches a write too many.
					want := make([]float32, steps+1)
					got := make([]float32, steps+1)
					want[steps], got[steps] = 7, 7
					callRows(k.ref, &w.Data[0], w.RowBytes(), &p, &want[0], 4*steps, steps)
					callRows(k.fn, &w.Data[0], w.RowBytes(), &p, &got[0], 4*steps, steps)
					for i := range want {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("row %d: %s kernel %v, one-row %v", i, k.name, got[i], want[i])
						}
					}
				})
			}
		}
	}
}

// BenchmarkTileRows compares the one-token kernels side by side over a
// whole matrix per call, as a decode step makes it: 64 rows of 576 values,
// which stay in cache, and a matrix of about 100 MB (Q8_0), which streams
// from DRAM. The shared machine's load drifts within seconds, so the
// variants alternate in short slices (a few ms each) for b.N rounds; each
// is reported as the median of its rounds in multiply-adds per ns of the
// thread's CPU time, and each variant's ratio to the first (the one-row
// kernel, for Q4_0 the exact one) as the median of the per-round ratios.
func BenchmarkTileRows(b *testing.B) {
	if !hasAVX2 {
		b.Skip("no AVX2")
	}
	r := rand.New(rand.NewPCG(73, 74))
	const cols = 576
	for _, size := range []struct {
		name        string
		rows, calls int
	}{{"cache", 64, 200}, {"dram", 160 << 10, 1}} {
		for _, typ := range []gguf.GGMLType{gguf.Q8_0, gguf.Q4_0} {
			vs, names := []any{rowKernels[0].ref}, []string{"1row"}
			if typ == gguf.Q4_0 {
				// The exact one-row kernel first, the ratios' baseline: the
				// arithmetic all Q4_0 kernels had before the offset came out
				// of the integers.
				vs, names = []any{q4_0Tile1x1Exact, q4_0Tile1x1}, []string{"1row-exact", "1row"}
			}
			for _, k := range rowKernels {
				if k.typ == typ {
					vs, names = append(vs, k.fn), append(names, k.name)
				}
			}
			w := randomMatrix(r, typ, size.rows, cols)
			var p q8Tiles
			p.prepareBiased(randomVector(r, cols), cols, 1, false)
			p.blockSums()
			if w.packedGroup == packGroupAVX2 {
				// The AVX2 packed family's one-token kernel (the rows are
				// whole groups; its bits are not the one-row kernel's).
				pk, c := packedKernels(typ, packGroupAVX2)[1], p.c8
				if typ == gguf.Q4_0 {
					c = p.c4
				}
				vs = append(vs, plainKernel(func(_ *byte, _ int, x *int8, d *float32, _ *float32, nb int, out *float32, _ int, steps int) {
					pk(&w.packed[0], x, d, &c[0], nb, out, 4*steps, steps/packGroupAVX2)
				}))
				names = append(names, "packed8")
			}
			out := make([]float32, size.rows)
			b.Run(fmt.Sprintf("%s/%v", size.name, typ), func(b *testing.B) {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				rates := make([][]float64, len(vs))
				ratios := make([][]float64, len(vs))
				for range b.N {
					for i, fn := range vs {
						t0 := threadCPU()
						for range size.calls {
							callRows(fn, &w.Data[0], w.RowBytes(), &p, &out[0], 4*size.rows, size.rows)
						}
						ns := float64((threadCPU() - t0).Nanoseconds())
						rates[i] = append(rates[i], float64(size.calls*size.rows*cols)/ns)
						ratios[i] = append(ratios[i], rates[i][len(rates[i])-1]/rates[0][len(rates[0])-1])
					}
				}
				for i := range vs {
					b.ReportMetric(median(rates[i]), names[i]+"-MAC/cpu-ns")
					if i > 0 {
						b.ReportMetric(median(ratios[i]), names[i]+"/"+names[0])
					}
				}
			})
		}
	}
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
