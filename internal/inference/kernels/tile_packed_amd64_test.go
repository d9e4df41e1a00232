//go:build !purego

package kernels

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"partnerapi/internal/inference/gguf"
)

// packedPaths lists the kernel paths with packed weights (AVX-512 and
// AVX2), those this CPU lacks with the reason they are skipped.
func packedPaths() []tilePath {
	var ps []tilePath
	for _, p := range tilePaths() {
		if p.name == "avx512-packed" || p.name == "avx2-packed" {
			ps = append(ps, p)
		}
	}
	return ps
}

// forEachPackedPath runs fn once per packed path as a subtest.
func forEachPackedPath(t *testing.T, fn func(t *testing.T)) {
	for _, p := range packedPaths() {
		t.Run(p.name, func(t *testing.T) {
			if p.skip != "" {
				t.Skip(p.skip)
			}
			defer p.use()()
			fn(t)
		})
	}
}

// TestPackedMatchesRowDots holds the packed Q8_0 and Q4_0 kernels of each
// family, called through mulRowsPackedAsm on every token count of one
// group (1–10) and on prefill counts, to the portable row dots: whole
// groups, a tail of rows past the last group, ranges that start and end
// off a group boundary, one block and many. The integer sums are exact, so
// the two differ only in float rounding, bounded by the magnitude of the
// terms.
func TestPackedMatchesRowDots(t *testing.T) {
	forEachPackedPath(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(81, 82))
		ref := map[gguf.GGMLType]rowDot{gguf.Q8_0: dotQ8_0Go, gguf.Q4_0: dotQ4_0Go}
		for _, typ := range []gguf.GGMLType{gguf.Q8_0, gguf.Q4_0} {
			for _, cols := range underRace([]int{32, 64, 224, 576, 4864}) {
				for _, rows := range []int{16, 37, 64} {
					w := randomMatrix(r, typ, rows, cols)
					if !w.Packed() || w.packedGroup != packGroup {
						t.Fatalf("%v %d×%d: Pack did not pack in groups of %d", typ, rows, cols, packGroup)
					}
					for _, n := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 21, 33} {
						for _, span := range [][2]int{{0, rows}, {3, rows - 1}, {16, rows}} {
							t.Run(fmt.Sprintf("%v/%dx%d/tokens%d/rows%d-%d", typ, rows, cols, n, span[0], span[1]), func(t *testing.T) {
								x := randomVector(r, n*cols)
								var p q8Tiles
								p.prepare(x, cols, n)
								got := make([]float32, n*rows)
								mulRowsPackedAsm(got, w, &p, span[0], span[1])
								checkAgainstRowDots(t, ref[typ], w, x, n, got, span[0], span[1])
							})
						}
					}
				}
			}
		}
	})
}

// TestPackedOneTokenMatchesEachToken holds each packed kernel family to
// batch invariance at the kernel level: every token of an N-token call
// (N = 2..10, and a prefill count) gets exactly the bits the one-token
// kernel gives it alone, on whole groups and on a tail, where both go
// through the one-row tiles.
func TestPackedOneTokenMatchesEachToken(t *testing.T) {
	forEachPackedPath(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(91, 92))
		for _, typ := range []gguf.GGMLType{gguf.Q8_0, gguf.Q4_0} {
			for _, cols := range []int{32, 576, 4864} {
				const rows = 3*16 + 5
				w := randomMatrix(r, typ, rows, cols)
				for _, n := range []int{2, 3, 4, 5, 6, 7, 8, 9, 10, 23} {
					x := randomVector(r, n*cols)
					var p q8Tiles
					p.prepare(x, cols, n)
					got := make([]float32, n*rows)
					mulRowsPackedAsm(got, w, &p, 0, rows)
					for tok := range n {
						var p1 q8Tiles
						p1.prepare(x[tok*cols:(tok+1)*cols], cols, 1)
						alone := make([]float32, rows)
						mulRowsPackedAsm(alone, w, &p1, 0, rows)
						for row := range rows {
							if g, a := got[tok*rows+row], alone[row]; math.Float32bits(g) != math.Float32bits(a) {
								t.Fatalf("%v %d cols, %d tokens: token %d row %d is %v, alone %v", typ, cols, n, tok, row, g, a)
							}
						}
					}
				}
			}
		}
	})
}

// TestPackedIntegerBounds drives the packed kernels' integer sums to their
// bounds, where a saturating or overflowing int16 step would show: every
// weight at an extreme (Q4_0 nibbles all 15 or all 0, Q8_0 bytes -128,
// -127 or 127) against activations that quantise to all +127 or all -127,
// over whole groups and a tail, for one token and ten.
func TestPackedIntegerBounds(t *testing.T) {
	forEachPackedPath(t, func(t *testing.T) {
		ref := map[gguf.GGMLType]rowDot{gguf.Q8_0: dotQ8_0Go, gguf.Q4_0: dotQ4_0Go}
		for _, c := range []struct {
			typ  gguf.GGMLType
			fill byte
		}{{gguf.Q4_0, 0xff}, {gguf.Q4_0, 0x00}, {gguf.Q8_0, 0x80}, {gguf.Q8_0, 0x81}, {gguf.Q8_0, 0x7f}} {
			for _, sign := range []float32{1, -1} {
				const cols = 96
				rows := 2*packGroup + 3
				w := Matrix{Type: c.typ, Rows: rows, Cols: cols}
				w.Data = make([]byte, rows*w.RowBytes())
				bs := BlockQ4_0
				if c.typ == gguf.Q8_0 {
					bs = BlockQ8_0
				}
				for o := 0; o < len(w.Data); o += bs {
					binary.LittleEndian.PutUint16(w.Data[o:], FloatToHalf(1))
					for i := o + 2; i < o+bs; i++ {
						w.Data[i] = c.fill
					}
				}
				w = Pack(w)
				for _, n := range []int{1, 10} {
					t.Run(fmt.Sprintf("%v/%#x/x%+v/tokens%d", c.typ, c.fill, sign, n), func(t *testing.T) {
						x := make([]float32, n*cols)
						for i := range x {
							x[i] = sign
						}
						var p q8Tiles
						p.prepare(x, cols, n)
						got := make([]float32, n*rows)
						mulRowsPackedAsm(got, w, &p, 0, rows)
						checkAgainstRowDots(t, ref[c.typ], w, x, n, got, 0, rows)
					})
				}
			}
		}
	})
}

// checkAgainstRowDots compares rows [lo, hi) of got (n tokens' products
// with w) with the reference row dot, to the rounding the float summation
// order allows, and checks that the other rows were left alone.
func checkAgainstRowDots(t *testing.T, dot rowDot, w Matrix, x []float32, n int, got []float32, lo, hi int) {
	t.Helper()
	cols := w.Cols
	deq := make([][]float32, w.Rows)
	for row := lo; row < hi; row++ {
		deq[row] = make([]float32, cols)
		DequantizeRow(deq[row], w.Type, w.Row(row))
	}
	for tok := range n {
		var a activation
		xt := x[tok*cols : (tok+1)*cols]
		a.prepare(actQ8_0, xt)
		for row := range w.Rows {
			g := got[tok*w.Rows+row]
			if row < lo || row >= hi {
				if g != 0 {
					t.Fatalf("token %d row %d outside [%d, %d) written: %v", tok, row, lo, hi, g)
				}
				continue
			}
			want := dot(w.Row(row), &a)
			mag := termMagnitude(deq[row], xt)
			if d := math.Abs(float64(g - want)); d > 1e-5*mag+1e-6 {
				t.Fatalf("token %d row %d: packed %v, row dot %v (|diff| %g, Σ|terms| %g)", tok, row, g, want, d, mag)
			}
		}
	}
}

// TestPackLayout checks Pack's layout in each family on a matrix whose
// bytes say where they come from: scales in order, Q8_0 bytes flipped to
// w+128 for AVX-512 and as they are for AVX2, chunk j of a block holding
// bytes 4j..4j+3 of each row at 4·row.
func TestPackLayout(t *testing.T) {
	forEachPackedPath(t, func(t *testing.T) {
		for _, typ := range []gguf.GGMLType{gguf.Q8_0, gguf.Q4_0} {
			group := packGroup
			rows, cols := 2*group+1, 64
			w := Matrix{Type: typ, Rows: rows, Cols: cols}
			w.Data = make([]byte, rows*w.RowBytes())
			for i := range w.Data {
				w.Data[i] = byte(i*7 + i/13)
			}
			w = Pack(w)
			bs, chunks, flip := BlockQ4_0, 4, byte(0)
			if typ == gguf.Q8_0 {
				bs, chunks, flip = BlockQ8_0, 8, byte(packFlip)
			}
			if want := 2 * 2 * group * bs; len(w.packed) != want {
				t.Fatalf("%v: %d packed bytes, want %d (two groups, the tail row unpacked)", typ, len(w.packed), want)
			}
			gb := group * bs
			for g := range 2 {
				for b := range 2 {
					o := w.packed[(2*g+b)*gb:]
					for i := range group {
						blk := w.Row(group*g + i)[b*bs:]
						if o[2*i] != blk[0] || o[2*i+1] != blk[1] {
							t.Fatalf("%v group %d block %d row %d: scale bytes %x, want %x", typ, g, b, i, o[2*i:2*i+2], blk[:2])
						}
						for j := range chunks {
							for m := range 4 {
								if got, want := o[2*group+4*group*j+4*i+m], blk[2+4*j+m]^flip; got != want {
									t.Fatalf("%v group %d block %d row %d chunk %d byte %d: %#x, want %#x", typ, g, b, i, j, m, got, want)
								}
							}
						}
					}
				}
			}
		}
	})
}

// TestBlockSums checks the packed kernels' corrections against a plain sum.
func TestBlockSums(t *testing.T) {
	r := rand.New(rand.NewPCG(83, 84))
	for _, n := range []int{1, 7, 23} {
		const cols = 96
		var p q8Tiles
		x := randomVector(r, n*cols)
		x[0], x[1] = 5, -5 // ±127 after quantisation
		p.prepareBiased(x, cols, n, false)
		p.blockSums()
		for i := range n * p.nb {
			var s int32
			for _, q := range p.qs[32*i : 32*i+32] {
				s += int32(q)
			}
			if p.c8[i] != -128*s || p.c4[i] != -8*s {
				t.Fatalf("%d tokens block %d: corrections %d, %d for Σx %d", n, i, p.c8[i], p.c4[i], s)
			}
		}
	}
}

// BenchmarkPackedKernel times one packed kernel call per family on
// cache-resident data (one group of 576 values, one to ten tokens) and
// reports the multiply-adds per nanosecond of one core, per ns of wall
// time and of thread CPU time, as BenchmarkTileKernel does for the one-row
// tiles. For the AVX2 family it also times, alternating with it in rounds
// of calls so both see the same machine load, what the same product cost
// before packing: the tiles over the same eight rows (for one token the
// multi-row ones), and reports the ratio (speedup, > 1 when the packed
// kernel is faster).
func BenchmarkPackedKernel(b *testing.B) {
	forEachPackedBench(b, benchmarkPackedKernel)
}

// forEachPackedBench runs fn once per packed path as a sub-benchmark.
func forEachPackedBench(b *testing.B, fn func(b *testing.B)) {
	for _, path := range packedPaths() {
		b.Run(path.name, func(b *testing.B) {
			if path.skip != "" {
				b.Skip(path.skip)
			}
			defer path.use()()
			fn(b)
		})
	}
}

func benchmarkPackedKernel(b *testing.B) {
	r := rand.New(rand.NewPCG(85, 86))
	const cols = 576
	group := packGroup
	for _, typ := range []gguf.GGMLType{gguf.Q8_0, gguf.Q4_0} {
		w := randomMatrix(r, typ, group, cols)
		ks, c := packedKernels(typ, group), func(p *q8Tiles) []int32 { return p.c8 }
		if typ == gguf.Q4_0 {
			c = func(p *q8Tiles) []int32 { return p.c4 }
		}
		for n := maxTileTokens; n >= 1; n-- {
			var p q8Tiles
			p.prepare(randomVector(r, n*cols), cols, n)
			out := make([]float32, group*maxTileTokens)
			packed := func() {
				ks[n](&w.packed[0], &p.qs[0], &p.d[0], &c(&p)[0], p.nb, &out[0], 4*group, 1)
			}
			// The same product before packing (AVX2 only).
			var before func()
			if group == packGroupAVX2 {
				tk := tileKernels(typ, false)[n]
				before = func() {
					tk(&w.Data[0], w.RowBytes(), &p.qs[0], &p.d[0], &p.cq[0], p.nb, &out[0], 4*group, group)
				}
			}
			b.Run(fmt.Sprintf("%v/%dx%d", typ, group, n), func(b *testing.B) {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				const round = 256
				var tPacked, tBefore time.Duration
				cpu0 := threadCPU()
				for b.Loop() {
					t0 := time.Now()
					for range round {
						packed()
					}
					t1 := time.Now()
					if before != nil {
						for range round {
							before()
						}
					}
					tPacked, tBefore = tPacked+t1.Sub(t0), tBefore+time.Since(t1)
				}
				macs := float64(group*n*cols) * float64(b.N) * round
				b.ReportMetric(macs/float64(tPacked.Nanoseconds()), "MAC/ns")
				if before != nil {
					b.ReportMetric(float64(tBefore)/float64(tPacked), "speedup")
				} else if cpu := threadCPU() - cpu0; cpu > 0 {
					b.ReportMetric(macs/float64(cpu.Nanoseconds()), "MAC/cpu-ns")
				}
			})
		}
	}
}

// BenchmarkPackedSideBySide times the weight products of a whole
// 135M-class decode step (210 products, ~105 MB of Q8_0 or ~56 MB of Q4_0
// weights, so they stream from memory) and a 64-token prefill chunk with
// each family's packed kernels and with its unpacked tiles (the one-row
// VNNI tiles for AVX-512, the AVX2 tiles and multi-row one-token kernels
// for AVX2), alternating within each iteration so both see the same
// machine load.
func BenchmarkPackedSideBySide(b *testing.B) {
	paths := tilePaths()
	byName := map[string]tilePath{}
	for _, p := range paths {
		byName[p.name] = p
	}
	for _, pair := range [][2]string{{"avx512-packed", "avx512-vnni"}, {"avx2-packed", "avx2"}} {
		packedPath, tilesPath := byName[pair[0]], byName[pair[1]]
		b.Run(pair[0], func(b *testing.B) {
			if packedPath.skip != "" {
				b.Skip(packedPath.skip)
			}
			defer packedPath.use()()
			benchmarkPackedSideBySide(b, tilesPath)
		})
	}
}

func benchmarkPackedSideBySide(b *testing.B, tiles tilePath) {
	r := rand.New(rand.NewPCG(87, 88))
	const layers, E, KV, FF = 30, 576, 192, 1536
	for _, typ := range []gguf.GGMLType{gguf.Q8_0, gguf.Q4_0} {
		var ws []Matrix
		for range layers {
			for _, s := range [][2]int{{E, E}, {KV, E}, {KV, E}, {E, E}, {FF, E}, {FF, E}, {E, FF}} {
				ws = append(ws, randomMatrix(r, typ, s[0], s[1]))
			}
		}
		x := randomVector(r, 64*FF)
		dst := make([]float32, 64*FF)
		step := func(n int) {
			for _, w := range ws {
				MatMul(dst[:n*w.Rows], w, x[:n*w.Cols], n)
			}
		}
		for _, tokens := range []int{1, 4, 10, 64} {
			b.Run(fmt.Sprintf("%v/tokens=%d", typ, tokens), func(b *testing.B) {
				var tPacked, tTiles time.Duration
				for b.Loop() {
					t0 := time.Now()
					step(tokens)
					t1 := time.Now()
					restore := tiles.use()
					step(tokens)
					restore()
					tPacked, tTiles = tPacked+t1.Sub(t0), tTiles+time.Since(t1)
				}
				b.ReportMetric(float64(tPacked.Nanoseconds())/float64(b.N), "ns-packed/op")
				b.ReportMetric(float64(tTiles.Nanoseconds())/float64(b.N), "ns-tiles/op")
				b.ReportMetric(float64(tTiles)/float64(tPacked), "speedup")
			})
		}
	}
}

// BenchmarkPack times Pack on a 0.5B-class FFN matrix (4864×896) and
// reports the weight bytes packed per second (on the worker pool, as at
// load), from which a model's packing time follows.
func BenchmarkPack(b *testing.B) {
	forEachPackedBench(b, benchmarkPack)
}

func benchmarkPack(b *testing.B) {
	r := rand.New(rand.NewPCG(89, 90))
	for _, typ := range []gguf.GGMLType{gguf.Q8_0, gguf.Q4_0, gguf.Q4_K, gguf.Q6_K} {
		cols := 896
		if typ.BlockSize() == QK_K {
			if !packsKQuant(gguf.Q4_K) {
				continue
			}
			cols = 1024
		}
		w := Matrix{Type: typ, Rows: 4864, Cols: cols, Data: randomRow(r, typ, 4864*cols)}
		b.Run(typ.String(), func(b *testing.B) {
			b.SetBytes(int64(len(w.Data)))
			for b.Loop() {
				if !Pack(w).Packed() {
					b.Fatal("not packed")
				}
			}
		})
	}
}

// TestPackIntoMatchesPack checks the loader's path to packed weights:
// PackedSize is the size of Pack's copy, PackInto into a buffer of that
// size gives the same bytes, and a buffer of another size is refused.
func TestPackIntoMatchesPack(t *testing.T) {
	forEachPackedPath(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(91, 92))
		for _, typ := range []gguf.GGMLType{gguf.Q8_0, gguf.Q4_0} {
			m := Matrix{Type: typ, Rows: 37, Cols: 64, Data: randomRow(r, typ, 37*64)}
			p := Pack(m)
			if n := PackedSize(m); n != len(p.packed) || n == 0 {
				t.Fatalf("%v: PackedSize %d, Pack's copy %d bytes", typ, n, len(p.packed))
			}
			q := PackInto(m, make([]byte, PackedSize(m)))
			if !bytes.Equal(q.packed, p.packed) || q.packedGroup != p.packedGroup {
				t.Fatalf("%v: PackInto differs from Pack", typ)
			}
			if PackedSize(p) != 0 {
				t.Errorf("%v: a packed matrix reports %d bytes to pack", typ, PackedSize(p))
			}
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("%v: PackInto accepted a buffer one byte short", typ)
					}
				}()
				PackInto(m, make([]byte, PackedSize(m)-1))
			}()
		}
	})
}
