//go:build !purego

package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"partnerapi/internal/inference/gguf"
)

// BenchmarkPackedQ5SideBySide times the same products with the packed
// Q5_0, Q5_1 and (AVX2) IQ4_NL kernels and with the loader's alternative,
// alternating within each iteration: Q5_0 and IQ4_NL against the packed
// Q8_0 kernels over their Q8_0 rewrites (34 bytes a block against 22 and
// 18), Q5_1 against its unpacked Go row dot. Sixteen 1536×576 matrices (a 135M-class FFN projection each, 11–12
// MB in all, so the weights stream from beyond the L2 as in a decode
// step), one token and ten.
func BenchmarkPackedQ5SideBySide(b *testing.B) {
	if !packsQ5 || !tilePacked {
		b.Skip("the kernel family in use does not pack Q5_0 or Q5_1")
	}
	r := rand.New(rand.NewPCG(125, 126))
	const rows, cols = 1536, 576
	for _, typ := range []gguf.GGMLType{gguf.Q5_0, gguf.Q5_1, gguf.IQ4_NL} {
		if typ == gguf.IQ4_NL && !packsIQ4NLMatrix(Matrix{Type: typ, Rows: rows, Cols: cols}) {
			continue
		}
		var packed, other []Matrix
		for range 16 {
			var data []byte
			if typ == gguf.IQ4_NL {
				data = randomBlocks(r, rows*cols/32, BlockIQ4_NL, 0)
			} else {
				data = randomRow(r, typ, rows*cols)
			}
			m := Matrix{Type: typ, Rows: rows, Cols: cols, Data: data}
			packed = append(packed, Pack(m))
			switch typ {
			case gguf.Q5_0:
				other = append(other, Pack(AsQ8_0(m)))
			case gguf.IQ4_NL:
				w, err := Rewrite(m)
				if err != nil {
					b.Fatal(err)
				}
				other = append(other, Pack(w))
			default:
				other = append(other, m)
			}
		}
		for _, n := range []int{1, 10} {
			x := randomVector(r, n*cols)
			dst := make([]float32, n*rows)
			b.Run(fmt.Sprintf("%v/tokens=%d", typ, n), func(b *testing.B) {
				alternate(b, float64(16*rows*cols*n), "packed", "other",
					func() {
						for _, w := range packed {
							MatMul(dst, w, x, n)
						}
					},
					func() {
						for _, w := range other {
							MatMul(dst, w, x, n)
						}
					})
			})
		}
	}
}

// TestPackedQ5_1 holds the packed Q5_1 kernels to batch invariance (every
// token of an N-token call gets the bits it gets alone, N = 2..10, 23) and
// to the Go row dot within float rounding (the kernels fuse the minimum's
// multiply-add), on random bytes and at the extremes.
func TestPackedQ5_1(t *testing.T) {
	forEachPackedPath(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(127, 128))
		const rows, cols = 48, 640
		raw := randomRow(r, gguf.Q5_1, rows*cols)
		ext := make([]byte, len(raw))
		for i := range ext {
			ext[i] = 0xff
		}
		for b := 0; b < len(ext); b += BlockQ5_1 {
			putHalfBits(ext[b:], FloatToHalf(0.01))
			putHalfBits(ext[b+2:], FloatToHalf(-0.2))
		}
		for _, data := range [][]byte{raw, ext} {
			m := Matrix{Type: gguf.Q5_1, Rows: rows, Cols: cols, Data: data}
			p := Pack(m)
			if !packsQ5Matrix(m) {
				t.Skip("this family does not pack Q5_1")
			}
			if !packedQ5(p) {
				t.Fatal("Pack did not pack")
			}
			for _, n := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 23} {
				x := randomVector(r, n*cols)
				got := make([]float32, n*rows)
				MatMul(got, p, x, n)
				var a activation
				for tok := range n {
					alone := make([]float32, rows)
					MatMul(alone, p, x[tok*cols:(tok+1)*cols], 1)
					a.prepare(actQ8_0, x[tok*cols:(tok+1)*cols])
					for row := range rows {
						g := got[tok*rows+row]
						if math.Float32bits(g) != math.Float32bits(alone[row]) {
							t.Fatalf("%d tokens: token %d row %d is %v, alone %v", n, tok, row, g, alone[row])
						}
						want := dotQ5_1Go(m.Row(row), &a)
						if d := math.Abs(float64(g - want)); d > 1e-4*(1+math.Abs(float64(want))) {
							t.Fatalf("%d tokens: token %d row %d is %v, the Go row dot %v", n, tok, row, g, want)
						}
					}
				}
			}
		}
	})
}

// TestPackedMatchesQ8_0Rewrite holds the packed Q5_0 and (AVX2) IQ4_NL
// kernels to the packed Q8_0 kernels over the Q8_0 rewrite of the same
// matrix, bit for bit: the same integer sums (Q5_0: q·x − 16·Σx against
// (q−16)·x; IQ4_NL: the looked-up levels) and the same float steps, for
// every token count of one group and prefill counts, on random bytes
// (every fifth-bit, nibble and index pattern) and, for Q5_0, at the
// extremes.
func TestPackedMatchesQ8_0Rewrite(t *testing.T) {
	forEachPackedPath(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(123, 124))
		const rows, cols = 48, 640
		ext := make([]byte, rows*cols/QK5_0*BlockQ5_0)
		for i := range ext {
			ext[i] = 0xff
		}
		for b := 0; b < len(ext); b += BlockQ5_0 {
			putHalfBits(ext[b:], FloatToHalf(0.01))
		}
		for _, tc := range []struct {
			name    string
			typ     gguf.GGMLType
			data    []byte
			extreme bool
			packs   func(Matrix) bool
		}{
			{"Q5_0 random", gguf.Q5_0, randomBlocks(r, rows*cols/32, BlockQ5_0, 0), false, packsQ5Matrix},
			{"Q5_0 extremes", gguf.Q5_0, ext, true, packsQ5Matrix},
			{"IQ4_NL random", gguf.IQ4_NL, randomBlocks(r, rows*cols/32, BlockIQ4_NL, 0), false, packsIQ4NLMatrix},
		} {
			m := Matrix{Type: tc.typ, Rows: rows, Cols: cols, Data: tc.data}
			p := Pack(m)
			if !tc.packs(m) {
				if p.Packed() {
					t.Fatalf("%s: packed a matrix this family has no kernels for", tc.name)
				}
				continue
			}
			if !packedQ5(p) {
				t.Fatalf("%s: Pack did not pack", tc.name)
			}
			w := AsQ8_0(m)
			if tc.typ == gguf.IQ4_NL {
				var err error
				if w, err = Rewrite(m); err != nil {
					t.Fatal(err)
				}
			}
			q8 := Pack(w)
			for _, n := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 23} {
				x := randomVector(r, n*cols)
				if tc.extreme {
					for i := range x {
						x[i] = -float32(1 + i%3)
					}
				}
				got, want := make([]float32, n*rows), make([]float32, n*rows)
				MatMul(got, p, x, n)
				MatMul(want, q8, x, n)
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s, %d tokens: value %d is %v, the Q8_0 rewrite gives %v", tc.name, n, i, got[i], want[i])
					}
				}
			}
		}
	})
}
