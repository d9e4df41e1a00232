package kernels

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"partnerapi/internal/inference/gguf"
)

// TestQ5_0Block pins the Q5_0 layout on a hand-made block: value j's low
// four bits in qs[j%16] (high nibble from 16 on), its fifth bit at bit j of
// qh, the weight d·(q−16).
func TestQ5_0Block(t *testing.T) {
	blk := make([]byte, BlockQ5_0)
	putHalfBits(blk, FloatToHalf(0.5))
	// Value 0: q = 31 (low 0xf, fifth bit set) → 15. Value 16: q = 0 → −16.
	// Value 5: q = 0x13 (low 3, fifth bit) → 3. Value 21: q = 0x0a → −6.
	blk[6+0] = 0x0f
	blk[6+5] = 0xa3
	binary32 := uint32(1<<0 | 1<<5)
	blk[2], blk[3], blk[4], blk[5] = byte(binary32), byte(binary32>>8), byte(binary32>>16), byte(binary32>>24)
	out := make([]float32, QK5_0)
	DequantizeRow(out, gguf.Q5_0, blk)
	want := map[int]float32{0: 7.5, 16: -8, 5: 1.5, 21: -3, 1: -8}
	for j, w := range want {
		if out[j] != w {
			t.Errorf("value %d = %v, want %v", j, out[j], w)
		}
	}
}

// TestQ5_0AsQ8_0 checks that the Q8_0 rewrite of a Q5_0 matrix holds the
// same weights bit for bit and that products through it (the packed or
// tiled Q8_0 kernels) agree with the Q5_0 row dot, on random data and on
// Quantize's output; and that Quantize(Q5_0) round-trips within half a
// step (a whole one where the value of the other sign than the largest
// clamps at q = 31, as in ggml).
func TestQ5_0AsQ8_0(t *testing.T) {
	r := rand.New(rand.NewPCG(121, 122))
	const rows, cols = 37, 320
	x := randomVector(r, rows*cols)
	enc, err := Quantize(gguf.Q5_0, x)
	if err != nil {
		t.Fatal(err)
	}
	raw := randomBytes(r, rows*cols/QK5_0*BlockQ5_0)
	for b := 0; b < len(raw); b += BlockQ5_0 {
		putHalfBits(raw[b:], FloatToHalf(float32(r.NormFloat64())*0.01))
	}
	for _, data := range [][]byte{enc, raw} {
		m := Matrix{Type: gguf.Q5_0, Rows: rows, Cols: cols, Data: data}
		q8 := AsQ8_0(m)
		if q8.Type != gguf.Q8_0 || len(q8.Data) != rows*cols/QK8_0*BlockQ8_0 {
			t.Fatalf("AsQ8_0 gave %v with %d bytes", q8.Type, len(q8.Data))
		}
		a, b := make([]float32, rows*cols), make([]float32, rows*cols)
		DequantizeRow(a, gguf.Q5_0, data)
		DequantizeRow(b, gguf.Q8_0, q8.Data)
		if !slices.Equal(a, b) {
			t.Fatal("the Q8_0 rewrite dequantises differently")
		}
		packed := Pack(q8)
		for _, n := range []int{1, 4, 10} {
			v := randomVector(r, n*cols)
			got, want := make([]float32, n*rows), make([]float32, n*rows)
			MatMul(got, packed, v, n)
			MatMul(want, m, v, n)
			for i := range got {
				if d := math.Abs(float64(got[i] - want[i])); d > 1e-4*(1+math.Abs(float64(want[i]))) {
					t.Fatalf("%d tokens: value %d is %v through Q8_0, %v through the Q5_0 row dot", n, i, got[i], want[i])
				}
			}
		}
	}
	back := make([]float32, rows*cols)
	DequantizeRow(back, gguf.Q5_0, enc)
	for b := 0; b < rows*cols/QK5_0; b++ {
		var amax float64
		for _, v := range x[b*QK5_0 : (b+1)*QK5_0] {
			amax = max(amax, math.Abs(float64(v)))
		}
		for i := b * QK5_0; i < (b+1)*QK5_0; i++ {
			step := amax / 16
			bound := step*0.51 + 1e-6
			if math.Abs(float64(x[i])) > 15*step { // where the other sign clamps
				bound = step * 1.01
			}
			if d := math.Abs(float64(back[i] - x[i])); d > bound {
				t.Fatalf("value %d: %v → %v, %v off (step %v)", i, x[i], back[i], d, step)
			}
		}
	}
}

func putHalfBits(b []byte, h uint16) { b[0], b[1] = byte(h), byte(h>>8) }
