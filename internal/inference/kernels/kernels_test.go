package kernels

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"partnerapi/internal/inference/gguf"
)

func TestHalfConversions(t *testing.T) {
	for _, tc := range []struct {
		bits uint16
		f    float32
	}{
		{0x0000, 0}, {0x3c00, 1}, {0xc000, -2}, {0x3555, 0.333251953125}, {0x7bff, 65504},
		{0x0001, 5.960464477539063e-08}, {0x0400, 6.103515625e-05}, {0xfc00, float32(math.Inf(-1))},
	} {
		if got := HalfToFloat(tc.bits); got != tc.f {
			t.Errorf("HalfToFloat(%#04x) = %v, want %v", tc.bits, got, tc.f)
		}
		if got := FloatToHalf(tc.f); got != tc.bits {
			t.Errorf("FloatToHalf(%v) = %#04x, want %#04x", tc.f, got, tc.bits)
		}
	}
	// Every finite half survives the round trip exactly.
	for h := 0; h < 1<<16; h++ {
		if h&0x7c00 == 0x7c00 {
			continue
		}
		if got := FloatToHalf(HalfToFloat(uint16(h))); got != uint16(h) && !(h == 0x8000 && got == 0x8000) {
			t.Fatalf("round trip %#04x -> %#04x", h, got)
		}
	}
	// Ties round to even; overflow becomes infinity.
	if got := FloatToHalf(1 + 1.0/2048); got != 0x3c00 {
		t.Errorf("tie rounded to %#04x", got)
	}
	if got := FloatToHalf(1e6); got != 0x7c00 {
		t.Errorf("overflow gave %#04x", got)
	}
	if got := BF16ToFloat(FloatToBF16(3.140625)); got != 3.140625 {
		t.Errorf("bf16 %v", got)
	}
}

func randomBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	return b
}

// putHalf stores a small random half scale so random blocks stay finite.
func putHalf(b []byte, r *rand.Rand) {
	binary.LittleEndian.PutUint16(b, FloatToHalf(float32(r.Float64()*2-1)*0.1))
}

func half(b []byte) float32 { return HalfToFloat(binary.LittleEndian.Uint16(b)) }

// formula computes element i of a block straight from the block-format
// description (inference.md §4), written per element rather than per loop
// so it shares no structure with the kernels.
var formula = map[gguf.GGMLType]func(blk []byte, i int) float32{
	gguf.Q8_0: func(blk []byte, i int) float32 { return half(blk) * float32(int8(blk[2+i])) },
	gguf.Q4_0: func(blk []byte, i int) float32 {
		if i < 16 {
			return half(blk) * float32(int(blk[2+i]&0x0f)-8)
		}
		return half(blk) * float32(int(blk[2+i-16]>>4)-8)
	},
	gguf.Q4_K: func(blk []byte, i int) float32 {
		d, dmin, scales, qs := half(blk), half(blk[2:]), blk[4:16], blk[16:]
		c, w := i/64, i%64
		var q, j int
		if w < 32 {
			q, j = int(qs[32*c+w]&0x0f), 2*c
		} else {
			q, j = int(qs[32*c+w-32]>>4), 2*c+1
		}
		var sc, m int
		if j < 4 {
			sc, m = int(scales[j]&63), int(scales[j+4]&63)
		} else {
			sc = int(scales[j+4]&0x0f) | int(scales[j-4]>>6)<<4
			m = int(scales[j+4]>>4) | int(scales[j]>>6)<<4
		}
		return d*float32(sc)*float32(q) - dmin*float32(m)
	},
	gguf.Q6_K: func(blk []byte, i int) float32 {
		ql, qh, scales, d := blk[0:128], blk[128:192], blk[192:208], half(blk[208:])
		n, r := i/128, i%128
		ql, qh, scales = ql[64*n:], qh[32*n:], scales[8*n:]
		l, part := r%32, r/32
		is := l / 16
		var q int
		switch part {
		case 0:
			q = int(ql[l]&0xf) | int(qh[l]>>0&3)<<4
		case 1:
			q = int(ql[l+32]&0xf) | int(qh[l]>>2&3)<<4
		case 2:
			q = int(ql[l]>>4) | int(qh[l]>>4&3)<<4
		case 3:
			q = int(ql[l+32]>>4) | int(qh[l]>>6&3)<<4
		}
		return d * float32(int8(scales[is+2*part])) * float32(q-32)
	},
}

func TestDequantizeMatchesBlockFormulas(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for typ, f := range formula {
		t.Run(typ.String(), func(t *testing.T) {
			const blocks = 3
			bs, ts := typ.BlockSize(), typ.TypeSize()
			src := randomBytes(r, blocks*ts)
			for b := 0; b < blocks; b++ {
				switch typ {
				case gguf.Q6_K:
					putHalf(src[b*ts+208:], r)
				case gguf.Q4_K:
					putHalf(src[b*ts:], r)
					putHalf(src[b*ts+2:], r)
				default:
					putHalf(src[b*ts:], r)
				}
			}
			dst := make([]float32, blocks*bs)
			DequantizeRow(dst, typ, src)
			for i, got := range dst {
				b := i / bs
				want := f(src[b*ts:(b+1)*ts], i%bs)
				if math.Abs(float64(got-want)) > 1e-6*math.Max(1, math.Abs(float64(want))) {
					t.Fatalf("element %d: got %v, want %v", i, got, want)
				}
			}
		})
	}
}

func randomVector(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

func rmsError(a, b []float32) float64 {
	var num, den float64
	for i := range a {
		d := float64(a[i] - b[i])
		num += d * d
		den += float64(a[i]) * float64(a[i])
	}
	return math.Sqrt(num / den)
}

func TestQuantizeRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	x := randomVector(r, 1024)
	x[5] = 0 // exact zeros must survive
	for _, tc := range []struct {
		typ    gguf.GGMLType
		maxRMS float64
	}{
		{gguf.F32, 0}, {gguf.F16, 1e-3}, {gguf.BF16, 5e-3}, {gguf.Q8_0, 0.01},
		{gguf.Q6_K, 0.03}, {gguf.Q4_0, 0.12}, {gguf.Q4_K, 0.12},
	} {
		t.Run(tc.typ.String(), func(t *testing.T) {
			enc, err := Quantize(tc.typ, x)
			if err != nil {
				t.Fatal(err)
			}
			if len(enc) != len(x)/tc.typ.BlockSize()*tc.typ.TypeSize() {
				t.Fatalf("encoded %d bytes", len(enc))
			}
			y := make([]float32, len(x))
			DequantizeRow(y, tc.typ, enc)
			e := rmsError(x, y)
			t.Logf("relative RMS error %.5f", e)
			if e > tc.maxRMS {
				t.Errorf("relative RMS error %.5f > %.5f", e, tc.maxRMS)
			}
			if tc.typ != gguf.Q4_K && y[5] != 0 {
				t.Errorf("zero became %v", y[5])
			}
			if tc.typ == gguf.Q8_0 {
				// Per element, Q8_0 is within half a step (plus f16 scale rounding).
				for b := 0; b < len(x)/32; b++ {
					var amax float32
					for _, v := range x[32*b : 32*b+32] {
						amax = max(amax, abs32(v))
					}
					for i := 32 * b; i < 32*b+32; i++ {
						if abs32(x[i]-y[i]) > amax/127*0.51+amax*1e-3 {
							t.Fatalf("element %d: %v vs %v", i, x[i], y[i])
						}
					}
				}
			}
		})
	}
	if _, err := Quantize(gguf.Q4_K, x[:100]); err == nil {
		t.Error("quantised a partial block")
	}
	if _, err := Quantize(gguf.IQ2_XXS, x); err == nil {
		t.Error("quantised an unsupported type")
	}
}

func naiveMatMul(w Matrix, x []float32, nTokens int) []float32 {
	row := make([]float32, w.Cols)
	out := make([]float32, nTokens*w.Rows)
	for r := 0; r < w.Rows; r++ {
		DequantizeRow(row, w.Type, w.Row(r))
		for t := 0; t < nTokens; t++ {
			var s float64
			for i, v := range row {
				s += float64(v) * float64(x[t*w.Cols+i])
			}
			out[t*w.Rows+r] = float32(s)
		}
	}
	return out
}

var allTypes = []gguf.GGMLType{gguf.F32, gguf.F16, gguf.BF16, gguf.Q8_0, gguf.Q4_0, gguf.Q5_0, gguf.Q5_1, gguf.Q4_K, gguf.Q5_K, gguf.Q6_K}

func randomMatrix(r *rand.Rand, typ gguf.GGMLType, rows, cols int) Matrix {
	data, err := Quantize(typ, randomVector(r, rows*cols))
	if err != nil {
		panic(err)
	}
	// Packed where the kernel family in use packs (Pack), as the model
	// loader does.
	return Pack(Matrix{Type: typ, Rows: rows, Cols: cols, Data: data})
}

func TestMatMulMatchesDequantisedProduct(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, typ := range allTypes {
		for _, shape := range []struct{ rows, cols, tokens int }{{3, 256, 1}, {300, 512, 1}, {64, 512, 3}, {40, 256, 6}} {
			t.Run(fmt.Sprintf("%v/%dx%dx%d", typ, shape.rows, shape.cols, shape.tokens), func(t *testing.T) {
				w := randomMatrix(r, typ, shape.rows, shape.cols)
				if err := w.Validate(); err != nil {
					t.Fatal(err)
				}
				x := randomVector(r, shape.tokens*shape.cols)
				got := make([]float32, shape.tokens*shape.rows)
				MatMul(got, w, x, shape.tokens)
				want := naiveMatMul(w, x, shape.tokens)
				// Float weights are exact up to summation order; quantised
				// weights see the activation quantised to 8 bits as well.
				tol := 1e-4
				if activationKind(typ) != actFloat {
					tol = 0.04
				}
				e := rmsError(want, got)
				t.Logf("relative RMS error %.5f", e)
				if e > tol {
					t.Errorf("relative RMS error %.5f > %v", e, tol)
				}
				if typ == gguf.F32 || typ == gguf.Q8_0 {
					if d := Dot(typ, w.Row(1), x[:shape.cols]); math.Abs(float64(d-got[1])) > 1e-4*math.Max(1, math.Abs(float64(d))) {
						t.Errorf("Dot %v, MatMul %v", d, got[1])
					}
				}
			})
		}
	}
}

func TestMatrixValidate(t *testing.T) {
	for _, m := range []Matrix{
		{Type: gguf.Q8_0, Rows: 2, Cols: 33, Data: make([]byte, 68)},
		{Type: gguf.IQ2_XXS, Rows: 1, Cols: 256, Data: make([]byte, 66)},
		{Type: gguf.F32, Rows: 2, Cols: 4, Data: make([]byte, 31)},
		{Type: gguf.F32, Rows: 0, Cols: 4, Data: nil},
	} {
		if err := m.Validate(); err == nil {
			t.Errorf("%+v accepted", m)
		}
	}
}

func BenchmarkMatVec(b *testing.B) {
	// One 0.5B-class FFN projection: 4864 rows of 896 values (896 is not a
	// multiple of 256, so the K-quants use 1024 columns).
	r := rand.New(rand.NewPCG(7, 8))
	for _, typ := range allTypes {
		cols := 896
		if typ.BlockSize() == QK_K {
			cols = 1024
		}
		w := randomMatrix(r, typ, 4864, cols)
		x := randomVector(r, cols)
		dst := make([]float32, w.Rows)
		b.Run(typ.String(), func(b *testing.B) {
			b.SetBytes(int64(len(w.Data)))
			for b.Loop() {
				MatVec(dst, w, x)
			}
		})
	}
}

// termMagnitude is Σ|w_i·x_i|, the bound the row-dot comparisons scale
// their tolerance by. It takes absolute values by comparison rather than
// with math.Abs, whose bit conversions checkptr checks under -race, where
// that check was most of the kernel tests' time.
func termMagnitude(w, x []float32) float64 {
	var mag float64
	for i := range w {
		v := float64(w[i] * x[i])
		if v < 0 {
			v = -v
		}
		mag += v
	}
	return mag
}
