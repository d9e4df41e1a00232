package kernels

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"partnerapi/internal/inference/gguf"
)

// TestMatMulTokensMatchRowDots holds the multi-token product (the tiled
// kernels where the assembly is in use) to the portable per-token row dots
// on random data of every size class: row counts odd and even, below and
// above a row block, every token count of one group (1–10) but some, and
// counts that split into several groups, one block and many; row counts of
// whole 16-row groups and with a tail for the packed weights; one token on
// 13 rows takes the one-token kernels' groups of eight, four and one. It
// runs once per kernel path this CPU has (packed, VNNI tiles, AVX2 tiles,
// row dots).
func TestMatMulTokensMatchRowDots(t *testing.T) {
	forEachTilePath(t, testMatMulTokensMatchRowDots)
}

func testMatMulTokensMatchRowDots(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	ref := map[gguf.GGMLType]rowDot{
		gguf.F32: dotF32Go, gguf.F16: dotF16Go, gguf.BF16: dotBF16, gguf.Q8_0: dotQ8_0Go,
		gguf.Q4_0: dotQ4_0Go, gguf.Q5_0: dotQ5_0Go, gguf.Q5_1: dotQ5_1Go, gguf.Q4_K: dotQ4KGo, gguf.Q5_K: dotQ5KGo, gguf.Q6_K: dotQ6KGo,
	}
	for _, typ := range allTypes {
		colSizes := []int{32, 96, 576, 4864}
		if typ.BlockSize() == QK_K {
			colSizes = []int{256, 512, 1536}
		}
		for _, cols := range underRace(colSizes) {
			for _, shape := range []struct{ rows, tokens int }{{1, 1}, {2, 1}, {13, 1}, {5, 3}, {6, 4}, {7, 5}, {3, 6}, {2, 7}, {4, 8}, {3, 10}, {67, 9}, {33, 11}, {5, 20}, {3, 23}, {16, 1}, {48, 2}, {32, 7}, {16, 10}, {48, 13}, {35, 31}} {
				t.Run(fmt.Sprintf("%v/%dx%d/tokens%d", typ, shape.rows, cols, shape.tokens), func(t *testing.T) {
					w := Matrix{Type: typ, Rows: shape.rows, Cols: cols}
					for range shape.rows {
						w.Data = append(w.Data, randomRow(r, typ, cols)...)
					}
					w = Pack(w)
					x := randomVector(r, shape.tokens*cols)
					got := make([]float32, shape.tokens*shape.rows)
					MatMul(got, w, x, shape.tokens)
					deq := make([][]float32, shape.rows)
					for row := range deq {
						deq[row] = make([]float32, cols)
						DequantizeRow(deq[row], typ, w.Row(row))
					}
					for tok := 0; tok < shape.tokens; tok++ {
						var a activation
						xt := x[tok*cols : (tok+1)*cols]
						a.prepare(activationKind(typ), xt)
						for row := 0; row < shape.rows; row++ {
							want := ref[typ](w.Row(row), &a)
							// Integer parts are exact; only the float summation
							// order differs, so bound the difference by the
							// magnitude of the terms.
							mag := termMagnitude(deq[row], xt)
							g := got[tok*shape.rows+row]
							if d := math.Abs(float64(g - want)); d > 1e-5*mag+1e-6 {
								t.Fatalf("token %d row %d: MatMul %v, row dot %v (|diff| %g, Σ|terms| %g)", tok, row, g, want, d, mag)
							}
						}
					}
				})
			}
		}
	}
}

// TestMatMulBatchInvariant checks that a token's product does not depend on
// the other tokens of the call (one token group, and several): a batched decode step must give each
// sequence exactly what it would get alone, or greedy outputs could diverge.
// It runs once per kernel path this CPU has.
func TestMatMulBatchInvariant(t *testing.T) {
	forEachTilePath(t, testMatMulBatchInvariant)
}

func testMatMulBatchInvariant(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	for _, typ := range allTypes {
		cols := 576
		if typ.BlockSize() == QK_K {
			cols = 512
		}
		w := randomMatrix(r, typ, 37, cols)
		// Every group size of one call (2 to 10 tokens), then several
		// groups, and (67) several of mulRows' token blocks of every
		// activation kind.
		for _, n := range []int{2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 23, 67} {
			x := randomVector(r, n*cols)
			batch := make([]float32, n*w.Rows)
			MatMul(batch, w, x, n)
			alone := make([]float32, w.Rows)
			for tok := 0; tok < n; tok++ {
				MatMul(alone, w, x[tok*cols:(tok+1)*cols], 1)
				for row, v := range alone {
					if b := batch[tok*w.Rows+row]; math.Float32bits(b) != math.Float32bits(v) {
						t.Fatalf("%v token %d row %d: %v in a batch of %d, %v alone", typ, tok, row, b, n, v)
					}
				}
			}
		}
	}
}

// randomRow returns n values' worth of one weight row with every payload
// bit pattern possible (so the assembly sees -128, 0x0f/0xf0 nibbles, all
// 6-bit codes) and small finite f16 scales.
func randomRow(r *rand.Rand, typ gguf.GGMLType, n int) []byte {
	switch typ {
	case gguf.F32:
		b := make([]byte, 4*n)
		for i := 0; i < n; i++ {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(r.NormFloat64())))
		}
		return b
	case gguf.F16:
		b := make([]byte, 2*n)
		for i := 0; i < n; i++ {
			binary.LittleEndian.PutUint16(b[2*i:], FloatToHalf(float32(r.NormFloat64())))
		}
		return b
	}
	size, per := typ.TypeSize(), typ.BlockSize()
	b := randomBytes(r, n/per*size)
	for blk := 0; blk < n/per; blk++ {
		o := blk * size
		switch typ {
		case gguf.Q8_0, gguf.Q4_0, gguf.Q5_0:
			putHalf(b[o:], r)
		case gguf.Q4_K, gguf.Q5_K, gguf.Q5_1:
			putHalf(b[o:], r)
			putHalf(b[o+2:], r)
		case gguf.Q6_K:
			putHalf(b[o+208:], r)
		case gguf.Q3_K:
			putHalf(b[o+108:], r)
		case gguf.Q2_K:
			putHalf(b[o+80:], r)
			putHalf(b[o+82:], r)
		}
	}
	return b
}

// TestBlockCorrections checks the AVX2 Q4_0 corrections against a plain
// sum, on blocks of random values and at both ends of the int8 range.
func TestBlockCorrections(t *testing.T) {
	r := rand.New(rand.NewPCG(77, 78))
	for _, c := range []struct {
		name   string
		lo, hi int
	}{{"random", -127, 127}, {"all-127", 127, 127}, {"all-minus-127", -127, -127}, {"all-minus-128", -128, -128}, {"zero", 0, 0}} {
		t.Run(c.name, func(t *testing.T) {
			const blocks = 7
			qs := make([]int8, blocks*QK8_0)
			d := make([]float32, blocks)
			for i := range qs {
				qs[i] = int8(c.lo + r.IntN(c.hi-c.lo+1))
			}
			for i := range d {
				d[i] = r.Float32()
			}
			got := make([]float32, blocks)
			blockCorrections(got, qs, d)
			for i := range got {
				var s int32
				for _, v := range qs[QK8_0*i : QK8_0*(i+1)] {
					s += int32(v)
				}
				if want := d[i] * float32(-8*s); got[i] != want {
					t.Fatalf("block %d: %v, want %v", i, got[i], want)
				}
			}
		})
	}
}
