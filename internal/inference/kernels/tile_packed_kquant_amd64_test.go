//go:build !purego

package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"partnerapi/internal/inference/gguf"
)

// TestPackedKQuantMatchesGo holds the packed Q4_K and Q6_K kernels to
// dotQ4KGo and dotQ6KGo bit for bit, through MatMul and through mulRowsPackedKAsm on ranges off a group
// boundary: every token count of one group (1–10) and prefill counts,
// whole groups and a tail of rows, one superblock and many. Every token's
// value equals the reference's for that token alone, so the kernels are
// batch-invariant too.
func TestPackedKQuantMatchesGo(t *testing.T) {
	forEachPackedPath(t, func(t *testing.T) {
		if !packsKQuant(gguf.Q4_K) {
			t.Skip("this family does not pack Q4_K")
		}
		r := rand.New(rand.NewPCG(111, 112))
		ref := map[gguf.GGMLType]rowDot{gguf.Q4_K: dotQ4KGo, gguf.Q5_K: dotQ5KGo, gguf.Q6_K: dotQ6KGo, gguf.Q3_K: dotQ3KGo, gguf.Q2_K: dotQ2KGo}
		for _, typ := range []gguf.GGMLType{gguf.Q4_K, gguf.Q5_K, gguf.Q6_K, gguf.Q3_K, gguf.Q2_K} {
			if !packsKQuant(typ) || typ == gguf.Q3_K && !packsQ3K() || typ == gguf.Q2_K && !packsQ2K() {
				continue // this family has no packed kernels for typ
			}
			for _, cols := range underRace([]int{256, 1024, 2304}) {
				for _, rows := range []int{16, 37, 64} {
					w := Matrix{Type: typ, Rows: rows, Cols: cols, Data: randomRow(r, typ, rows*cols)}
					w = Pack(w)
					if !packedKQuant(w) {
						t.Fatalf("%v %d×%d: Pack did not pack", typ, rows, cols)
					}
					for _, n := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 23} {
						x := randomVector(r, n*cols)
						acts := make([]activation, n)
						for i := range acts {
							acts[i].prepare(actQ8_K, x[i*cols:(i+1)*cols])
						}
						want := func(tok, row int) float32 { return ref[typ](w.Row(row), &acts[tok]) }
						got := make([]float32, n*rows)
						MatMul(got, w, x, n)
						checkBits(t, fmt.Sprintf("%v/%dx%d/tokens%d/MatMul", typ, rows, cols, n), got, rows, n, 0, rows, want)
						var k kTiles
						k.prepare(x, cols, n, kTokens(w.packedGroup))
						k.sums(typ)
						for _, span := range [][2]int{{3, rows - 1}, {16, rows}} {
							got := make([]float32, n*rows)
							mulRowsPackedKAsm(got, w, &k, acts, span[0], span[1])
							checkBits(t, fmt.Sprintf("%v/%dx%d/tokens%d/rows%d-%d", typ, rows, cols, n, span[0], span[1]), got, rows, n, span[0], span[1], want)
						}
					}
				}
			}
		}
	})
}

// TestPackedKQuantIntegerBounds drives the packed kernels' integer sums to
// their bounds: Q4_K with every nibble 15 and every scale and minimum 63,
// Q6_K with every value 63 and every scale -128, against activations that
// quantise to all +127 or all -127, one token and ten, over four
// superblocks.
func TestPackedKQuantIntegerBounds(t *testing.T) {
	forEachPackedPath(t, func(t *testing.T) {
		if !packsKQuant(gguf.Q4_K) {
			t.Skip("this family does not pack Q4_K and Q6_K")
		}
		const rows, cols = 32, 1024
		for _, typ := range []gguf.GGMLType{gguf.Q4_K, gguf.Q5_K, gguf.Q6_K, gguf.Q3_K, gguf.Q2_K} {
			if !packsKQuant(typ) || typ == gguf.Q3_K && !packsQ3K() || typ == gguf.Q2_K && !packsQ2K() {
				continue // this family has no packed kernels for typ
			}
			size := typ.TypeSize()
			data := make([]byte, rows*cols/QK_K*size)
			for i := range data {
				data[i] = 0xff
			}
			for b := 0; b < len(data); b += size {
				if typ == gguf.Q3_K { // every value 3 (q 7), every scale 31
					putHalfValue(data[b+108:], 0.01)
					continue
				}
				if typ == gguf.Q2_K { // every value 3, scale and minimum 15
					putHalfValue(data[b+80:], 0.01)
					putHalfValue(data[b+82:], 0.02)
					continue
				}
				if typ != gguf.Q6_K { // Q4_K and Q5_K: d and dmin first
					putHalfValue(data[b:], 0.01)
					putHalfValue(data[b+2:], 0.02)
					continue
				}
				for s := range 16 {
					data[b+192+s] = 0x80
				}
				putHalfValue(data[b+208:], 0.01)
			}
			w := Pack(Matrix{Type: typ, Rows: rows, Cols: cols, Data: data})
			ref := map[gguf.GGMLType]rowDot{gguf.Q4_K: dotQ4KGo, gguf.Q5_K: dotQ5KGo, gguf.Q6_K: dotQ6KGo, gguf.Q3_K: dotQ3KGo, gguf.Q2_K: dotQ2KGo}[typ]
			for _, sign := range []float32{1, -1} {
				for _, n := range []int{1, 10} {
					x := make([]float32, n*cols)
					for i := range x {
						x[i] = sign * float32(1+i%3)
					}
					acts := make([]activation, n)
					for i := range acts {
						acts[i].prepare(actQ8_K, x[i*cols:(i+1)*cols])
					}
					got := make([]float32, n*rows)
					MatMul(got, w, x, n)
					checkBits(t, fmt.Sprintf("%v/sign%v/tokens%d", typ, sign, n), got, rows, n, 0, rows, func(tok, row int) float32 {
						return ref(w.Row(row), &acts[tok])
					})
				}
			}
		}
	})
}

func checkBits(t *testing.T, name string, got []float32, rows, n, lo, hi int, want func(tok, row int) float32) {
	t.Helper()
	for tok := range n {
		for row := lo; row < hi; row++ {
			if g, w := got[tok*rows+row], want(tok, row); math.Float32bits(g) != math.Float32bits(w) {
				t.Fatalf("%s: token %d row %d is %v, want %v", name, tok, row, g, w)
			}
		}
	}
}

func putHalfValue(b []byte, v float32) {
	h := FloatToHalf(v)
	b[0], b[1] = byte(h), byte(h>>8)
}

// BenchmarkPackedKQuantSideBySide times the same Q4_K or Q6_K product with
// the packed kernels and with the block kernels over the GGUF layout (the
// row dots and their four-token form), alternating within each iteration
// so both see the same machine load, on a 1B-class projection (2048×2048)
// and a 0.5B-class FFN one (4864×1024). It reports each side's
// multiply-adds per ns (both cores) and the packed side's speedup.
func BenchmarkPackedKQuantSideBySide(b *testing.B) {
	if !packsKQuant(gguf.Q4_K) {
		b.Skip("the kernel family in use does not pack Q4_K and Q6_K")
	}
	r := rand.New(rand.NewPCG(113, 114))
	for _, typ := range []gguf.GGMLType{gguf.Q4_K, gguf.Q5_K, gguf.Q6_K} {
		if !packsKQuant(typ) {
			continue
		}
		for _, shape := range [][2]int{{2048, 2048}, {4864, 1024}} {
			rows, cols := shape[0], shape[1]
			plain := Matrix{Type: typ, Rows: rows, Cols: cols, Data: randomRow(r, typ, rows*cols)}
			packed := Pack(plain)
			for _, n := range []int{1, 4, 10, 64} {
				x := randomVector(r, n*cols)
				dst := make([]float32, n*rows)
				b.Run(fmt.Sprintf("%v/%dx%d/tokens=%d", typ, rows, cols, n), func(b *testing.B) {
					var tp, tu time.Duration
					for b.Loop() {
						t0 := time.Now()
						MatMul(dst, packed, x, n)
						t1 := time.Now()
						MatMul(dst, plain, x, n)
						tp, tu = tp+t1.Sub(t0), tu+time.Since(t1)
					}
					macs := float64(rows*cols*n) * float64(b.N)
					b.ReportMetric(macs/float64(tp.Nanoseconds()), "MAC/ns-packed")
					b.ReportMetric(macs/float64(tu.Nanoseconds()), "MAC/ns-blocks")
					b.ReportMetric(float64(tu)/float64(tp), "speedup")
				})
			}
		}
	}
}

// BenchmarkKChunkSideBySide times the same packed K-quant products with
// more tokens than a kernel call takes, their token groups passing over
// kChunkBytes of groups at a time against one group at a time (the former
// loop), alternating within each iteration: 1B-class (2048×2048) and
// SmolLM2-class (1536×512) shapes, ten tokens (a ten-stream decode step on
// AVX2, whose kernels take four) and 64 (prefill).
func BenchmarkKChunkSideBySide(b *testing.B) {
	if !packsKQuant(gguf.Q4_K) {
		b.Skip("the kernel family in use does not pack K-quants")
	}
	r := rand.New(rand.NewPCG(115, 116))
	chunk := kChunkBytes
	defer func() { kChunkBytes = chunk }()
	for _, typ := range []gguf.GGMLType{gguf.Q4_K, gguf.Q6_K} {
		for _, shape := range [][2]int{{2048, 2048}, {1536, 512}} {
			rows, cols := shape[0], shape[1]
			w := Pack(Matrix{Type: typ, Rows: rows, Cols: cols, Data: randomRow(r, typ, rows*cols)})
			for _, n := range []int{10, 64} {
				x := randomVector(r, n*cols)
				dst := make([]float32, n*rows)
				b.Run(fmt.Sprintf("%v/%dx%d/tokens=%d", typ, rows, cols, n), func(b *testing.B) {
					var tc, tg time.Duration
					for b.Loop() {
						kChunkBytes = chunk
						t0 := time.Now()
						MatMul(dst, w, x, n)
						t1 := time.Now()
						kChunkBytes = 0
						MatMul(dst, w, x, n)
						tc, tg = tc+t1.Sub(t0), tg+time.Since(t1)
					}
					macs := float64(rows*cols*n) * float64(b.N)
					b.ReportMetric(macs/float64(tc.Nanoseconds()), "MAC/ns-chunks")
					b.ReportMetric(macs/float64(tg.Nanoseconds()), "MAC/ns-groups")
					b.ReportMetric(float64(tg)/float64(tc), "speedup")
				})
			}
		}
	}
}
