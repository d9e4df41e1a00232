package kernels

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/inference/gguf"
)

// ggmlDequantizeQ3K is ggml's dequantize_row_q3_K for one block, written
// the way ggml writes it (the scales unpacked as four words with kmask1 and
// kmask2, the hmask bit walking across the two halves), so that the
// per-value formulas of q3_k.go are checked against a second reading of
// the layout.
func ggmlDequantizeQ3K(y []float32, blk []byte) {
	const kmask1, kmask2 = 0x03030303, 0x0f0f0f0f
	var aux [4]uint32
	for i := range 3 {
		aux[i] = binary.LittleEndian.Uint32(blk[96+4*i:])
	}
	tmp := aux[2]
	aux[2] = ((aux[0] >> 4) & kmask2) | (((tmp >> 4) & kmask1) << 4)
	aux[3] = ((aux[1] >> 4) & kmask2) | (((tmp >> 6) & kmask1) << 4)
	aux[0] = (aux[0] & kmask2) | (((tmp >> 0) & kmask1) << 4)
	aux[1] = (aux[1] & kmask2) | (((tmp >> 2) & kmask1) << 4)
	var scales [16]int8
	for i := range scales {
		scales[i] = int8(aux[i/4] >> (8 * uint(i%4)))
	}
	dAll := HalfToFloat(binary.LittleEndian.Uint16(blk[108:]))
	hm, q := blk[:32], blk[32:96]
	m, is, k := byte(1), 0, 0
	for n := 0; n < QK_K; n += 128 {
		shift := uint(0)
		for range 4 {
			for half := range 2 {
				dl := dAll * float32(scales[is]-32)
				is++
				for l := 16 * half; l < 16*half+16; l++ {
					v := int8(q[l]>>shift&3) - 4
					if hm[l]&m != 0 {
						v += 4
					}
					y[k] = dl * float32(v)
					k++
				}
			}
			shift += 2
			m <<= 1
		}
		q = q[32:]
	}
}

// randomBlocks is nb random blocks of size bs whose f16 scale at off is a
// finite random value (every other bit pattern being valid).
func randomBlocks(r *rand.Rand, nb, bs, off int) []byte {
	b := randomBytes(r, nb*bs)
	for i := range nb {
		binary.LittleEndian.PutUint16(b[i*bs+off:], FloatToHalf(float32(r.NormFloat64())*0.01))
	}
	return b
}

func TestQ3KDequantMatchesGGML(t *testing.T) {
	r := rand.New(rand.NewPCG(301, 302))
	data := randomBlocks(r, 64, BlockQ3_K, 108)
	got, want := make([]float32, 64*QK_K), make([]float32, 64*QK_K)
	DequantizeRow(got, gguf.Q3_K, data)
	for b := range 64 {
		ggmlDequantizeQ3K(want[b*QK_K:], data[b*BlockQ3_K:])
	}
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("value %d: %v, ggml's reading gives %v", i, got[i], want[i])
		}
	}
}

func TestIQ4NLDequant(t *testing.T) {
	blk := make([]byte, BlockIQ4_NL)
	binary.LittleEndian.PutUint16(blk, FloatToHalf(0.5))
	for j := range 16 {
		blk[2+j] = byte(j) | byte(15-j)<<4
	}
	got := make([]float32, 32)
	DequantizeRow(got, gguf.IQ4_NL, blk)
	for j := range 16 {
		if got[j] != 0.5*float32(iq4NLLevels[j]) || got[j+16] != 0.5*float32(iq4NLLevels[15-j]) {
			t.Fatalf("values %d and %d: %v, %v", j, j+16, got[j], got[j+16])
		}
	}
}

// TestRewriteIsExact holds Rewrite to its promise: the rewritten matrix
// has the original's weights bit for bit, on random blocks (every scale,
// value and high-bit pattern), and the rewritten product agrees with the
// dequantised weights' float dot product.
func TestRewriteIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(303, 304))
	for _, tc := range []struct {
		typ, to gguf.GGMLType
		bs, off int
	}{
		{gguf.Q3_K, gguf.Q6_K, BlockQ3_K, 108},
		{gguf.IQ4_NL, gguf.Q8_0, BlockIQ4_NL, 0},
		{gguf.Q4_1, gguf.Q5_1, BlockQ4_1, 0},
	} {
		t.Run(tc.typ.String(), func(t *testing.T) {
			const rows, cols = 48, 512
			m := Matrix{Type: tc.typ, Rows: rows, Cols: cols}
			m.Data = randomBlocks(r, rows*cols/tc.typ.BlockSize(), tc.bs, tc.off)
			if tc.typ == gguf.Q4_1 { // its minimum, a second f16
				for b := 0; b < len(m.Data); b += tc.bs {
					binary.LittleEndian.PutUint16(m.Data[b+2:], FloatToHalf(float32(r.NormFloat64())*0.1))
				}
			}
			w, err := Rewrite(m)
			if err != nil {
				t.Fatal(err)
			}
			if w.Type != tc.to || w.Validate() != nil {
				t.Fatalf("rewritten as %v (%v)", w.Type, w.Validate())
			}
			orig, got := make([]float32, rows*cols), make([]float32, rows*cols)
			DequantizeRow(orig, tc.typ, m.Data)
			DequantizeRow(got, w.Type, w.Data)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(orig[i]) {
					t.Fatalf("value %d: %v after the rewrite, %v before", i, got[i], orig[i])
				}
			}
			x := randomVector(r, cols)
			out := make([]float32, rows)
			MatMul(out, Pack(w), x, 1)
			if tc.typ == gguf.Q3_K {
				// Q3_K as it is (the packed AVX2 kernels, or the Go row
				// dot) sums the same integers in the same float steps as
				// its Q6_K rewrite: the same bits.
				for _, n := range []int{1, 4, 10} {
					xs := randomVector(r, n*cols)
					a, b := make([]float32, n*rows), make([]float32, n*rows)
					MatMul(a, Pack(m), xs, n)
					MatMul(b, Pack(w), xs, n)
					for i := range a {
						if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
							t.Fatalf("%d tokens: value %d is %v as Q3_K, %v as its Q6_K rewrite", n, i, a[i], b[i])
						}
					}
				}
			}
			var xmax float64
			for _, v := range x {
				xmax = max(xmax, math.Abs(float64(v)))
			}
			for row := range rows {
				var want, ww float64
				for c := range cols {
					w := float64(orig[row*cols+c])
					want += w * float64(x[c])
					ww += w * w
				}
				// The kernels quantise x to 8 bits: an error of up to half
				// a step (xmax/127) per value, about xmax/127/√12·|w| in
				// all; six times that is far below what a misread layout
				// gives.
				if d := math.Abs(float64(out[row]) - want); d > 6*xmax/127/math.Sqrt(12)*math.Sqrt(ww)+1e-4 {
					t.Fatalf("row %d: %v, float dot %v", row, out[row], want)
				}
			}
		})
	}
	if _, err := Rewrite(Matrix{Type: gguf.Q3_K, Rows: 2, Cols: 256, Data: make([]byte, BlockQ3_K)}); err == nil || !strings.Contains(err.Error(), "whole blocks") {
		t.Errorf("a short Q3_K matrix: %v", err)
	}
	if w, err := Rewrite(Matrix{Type: gguf.Q8_0, Rows: 1, Cols: 32, Data: make([]byte, BlockQ8_0)}); err != nil || w.Type != gguf.Q8_0 {
		t.Errorf("a Q8_0 matrix came back as %v, %v", w.Type, err)
	}
}

// TestQuantizeRewrittenTypes checks that the test quantisers encode Gaussian
// values within the error these types allow, so models made with them
// exercise the rewrites with realistic weights.
func TestQuantizeRewrittenTypes(t *testing.T) {
	r := rand.New(rand.NewPCG(305, 306))
	x := make([]float32, 64*QK_K)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	for _, tc := range []struct {
		typ    gguf.GGMLType
		maxRel float64
	}{{gguf.Q3_K, 0.25}, {gguf.IQ4_NL, 0.15}, {gguf.Q4_1, 0.15}, {gguf.Q2_K, 0.45}} {
		data, err := Quantize(tc.typ, x)
		if err != nil {
			t.Fatal(err)
		}
		y := make([]float32, len(x))
		DequantizeRow(y, tc.typ, data)
		var num, den float64
		for i := range x {
			num += float64(x[i]-y[i]) * float64(x[i]-y[i])
			den += float64(x[i]) * float64(x[i])
		}
		rel := math.Sqrt(num / den)
		t.Logf("%v: relative RMS error %.3f", tc.typ, rel)
		if rel > tc.maxRel || rel == 0 {
			t.Errorf("%v: relative RMS error %.3f, want (0, %.2f]", tc.typ, rel, tc.maxRel)
		}
	}
}

// BenchmarkPackedQ3KSideBySide times the same products with the packed
// Q3_K kernels and with the packed Q6_K kernels over the loader's other
// choice, the Q6_K rewrite (210 bytes a block against 110), alternating
// within each iteration: sixteen 2048×2048 matrices (a 1B-class
// projection each, 29 MB of Q3_K in all, beyond the L3 as in a decode
// step), one token, four and ten.
func BenchmarkPackedQ3KSideBySide(b *testing.B) {
	if !packsQ3K() {
		b.Skip("the kernel family in use does not pack Q3_K")
	}
	r := rand.New(rand.NewPCG(307, 308))
	const rows, cols = 2048, 2048
	var q3, q6 []Matrix
	for range 16 {
		m := Matrix{Type: gguf.Q3_K, Rows: rows, Cols: cols, Data: randomRow(r, gguf.Q3_K, rows*cols)}
		w, err := Rewrite(m)
		if err != nil {
			b.Fatal(err)
		}
		q3, q6 = append(q3, Pack(m)), append(q6, Pack(w))
	}
	for _, n := range []int{1, 4, 10} {
		x := randomVector(r, n*cols)
		dst := make([]float32, n*rows)
		b.Run(fmt.Sprintf("tokens=%d", n), func(b *testing.B) {
			alternate(b, float64(16*rows*cols*n), "q3_k", "q6_k",
				func() {
					for _, w := range q3 {
						MatMul(dst, w, x, n)
					}
				},
				func() {
					for _, w := range q6 {
						MatMul(dst, w, x, n)
					}
				})
		})
	}
}

// alternate runs first and then second in every iteration of b, so that
// both see the same machine, and reports each side's multiply-adds per ns
// (macs per call) and second's time over first's as the speedup.
func alternate(b *testing.B, macs float64, firstName, secondName string, first, second func()) {
	var t1, t2 time.Duration
	for b.Loop() {
		t0 := time.Now()
		first()
		t := time.Now()
		second()
		t1, t2 = t1+t.Sub(t0), t2+time.Since(t)
	}
	n := macs * float64(b.N)
	b.ReportMetric(n/float64(t1.Nanoseconds()), "MAC/ns-"+firstName)
	b.ReportMetric(n/float64(t2.Nanoseconds()), "MAC/ns-"+secondName)
	b.ReportMetric(float64(t2)/float64(t1), "speedup")
}
