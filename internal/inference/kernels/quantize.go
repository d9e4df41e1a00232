package kernels

import (
	"encoding/binary"
	"fmt"
	"math"

	"partnerapi/internal/inference/gguf"
)

// Quantize encodes src as type t in ggml layout. len(src) must be a whole
// number of blocks. The K-quant encoders use a plain min/max fit per
// sub-block rather than ggml's iterative search: the output is a valid file
// of that type with a slightly larger error, which is what tests need.
func Quantize(t gguf.GGMLType, src []float32) ([]byte, error) {
	size := rowBytes(t, len(src))
	if size < 0 {
		return nil, fmt.Errorf("kernels: cannot quantise %d values to %v (unsupported type or not whole blocks)", len(src), t)
	}
	dst := make([]byte, size)
	switch t {
	case gguf.F32:
		for i, x := range src {
			binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(x))
		}
	case gguf.F16:
		for i, x := range src {
			binary.LittleEndian.PutUint16(dst[2*i:], FloatToHalf(x))
		}
	case gguf.BF16:
		for i, x := range src {
			binary.LittleEndian.PutUint16(dst[2*i:], FloatToBF16(x))
		}
	case gguf.Q8_0:
		for b := 0; b < len(src)/QK8_0; b++ {
			quantizeQ8_0Block(dst[b*BlockQ8_0:], src[b*QK8_0:(b+1)*QK8_0])
		}
	case gguf.Q4_0:
		for b := 0; b < len(src)/QK4_0; b++ {
			quantizeQ4_0Block(dst[b*BlockQ4_0:], src[b*QK4_0:(b+1)*QK4_0])
		}
	case gguf.Q5_0:
		for b := 0; b < len(src)/QK5_0; b++ {
			quantizeQ5_0Block(dst[b*BlockQ5_0:], src[b*QK5_0:(b+1)*QK5_0])
		}
	case gguf.Q5_1:
		for b := 0; b < len(src)/32; b++ {
			quantizeQ5_1Block(dst[b*BlockQ5_1:], src[b*32:(b+1)*32])
		}
	case gguf.Q4_K:
		for b := 0; b < len(src)/QK_K; b++ {
			quantizeQ4KBlock(dst[b*BlockQ4_K:(b+1)*BlockQ4_K], src[b*QK_K:(b+1)*QK_K])
		}
	case gguf.Q5_K:
		for b := 0; b < len(src)/QK_K; b++ {
			quantizeQ5KBlock(dst[b*BlockQ5_K:(b+1)*BlockQ5_K], src[b*QK_K:(b+1)*QK_K])
		}
	case gguf.Q2_K:
		for b := 0; b < len(src)/QK_K; b++ {
			quantizeQ2KBlock(dst[b*BlockQ2_K:(b+1)*BlockQ2_K], src[b*QK_K:(b+1)*QK_K])
		}
	case gguf.Q3_K:
		for b := 0; b < len(src)/QK_K; b++ {
			quantizeQ3KBlock(dst[b*BlockQ3_K:(b+1)*BlockQ3_K], src[b*QK_K:(b+1)*QK_K])
		}
	case gguf.Q4_1:
		for b := 0; b < len(src)/32; b++ {
			quantizeQ4_1Block(dst[b*BlockQ4_1:(b+1)*BlockQ4_1], src[b*32:(b+1)*32])
		}
	case gguf.IQ4_NL:
		for b := 0; b < len(src)/32; b++ {
			quantizeIQ4NLBlock(dst[b*BlockIQ4_NL:(b+1)*BlockIQ4_NL], src[b*32:(b+1)*32])
		}
	case gguf.Q6_K:
		for b := 0; b < len(src)/QK_K; b++ {
			quantizeQ6KBlock(dst[b*BlockQ6_K:(b+1)*BlockQ6_K], src[b*QK_K:(b+1)*QK_K])
		}
	}
	return dst, nil
}

func quantizeQ8_0Block(dst []byte, x []float32) {
	var amax float32
	for _, v := range x {
		amax = max(amax, abs32(v))
	}
	d := amax / 127
	var id float32
	if d != 0 {
		id = 1 / d
	}
	binary.LittleEndian.PutUint16(dst, FloatToHalf(d))
	for j, v := range x {
		dst[2+j] = byte(int8(roundHalfAway(v * id)))
	}
}

// quantizeQ4_0Block follows ggml's quantize_row_q4_0_ref: the value with the
// largest magnitude maps to -8 so the full signed range is used.
func quantizeQ4_0Block(dst []byte, x []float32) {
	var amax, mx float32
	for _, v := range x {
		if abs32(v) > amax {
			amax, mx = abs32(v), v
		}
	}
	d := mx / -8
	var id float32
	if d != 0 {
		id = 1 / d
	}
	binary.LittleEndian.PutUint16(dst, FloatToHalf(d))
	for j := 0; j < 16; j++ {
		q0 := min(15, int(x[j]*id+8.5))
		q1 := min(15, int(x[j+16]*id+8.5))
		dst[2+j] = byte(q0) | byte(q1)<<4
	}
}

func quantizeQ4KBlock(dst []byte, x []float32) {
	df, dminf, sc, m := fitKScales(dst, x, 15)
	qs := dst[16:144]
	clear(qs)
	for j := range 8 {
		step, off := df*float32(sc[j]), dminf*float32(m[j])
		for l := range 32 {
			q := 0
			if step > 0 {
				q = max(0, min(15, roundHalfAway((x[32*j+l]+off)/step)))
			}
			qs[32*(j/2)+l] |= byte(q) << (4 * uint(j%2))
		}
	}
}

// fitKScales fits Q4_K's or Q5_K's scales to a block of 256 values (x ≈
// scale·q − min per 32-value sub-block, q in 0..levels, min ≥ 0: a plain
// min/max fit), writes d, dmin and the twelve bytes of six-bit scales and
// minimums to dst[:16], and returns d, dmin as floats and the six-bit codes.
func fitKScales(dst []byte, x []float32, levels int) (df, dminf float32, sc, m [8]uint8) {
	var scales, mins [8]float32
	for j := range 8 {
		lo, hi := float32(0), float32(0)
		for _, v := range x[32*j : 32*j+32] {
			lo, hi = min(lo, v), max(hi, v)
		}
		scales[j] = (hi - lo) / float32(levels)
		mins[j] = -lo
	}
	var maxScale, maxMin float32
	for j := range 8 {
		maxScale, maxMin = max(maxScale, scales[j]), max(maxMin, mins[j])
	}
	d := FloatToHalf(maxScale / 63)
	dmin := FloatToHalf(maxMin / 63)
	df, dminf = HalfToFloat(d), HalfToFloat(dmin)
	for j := range 8 {
		if df > 0 {
			sc[j] = uint8(min(63, roundHalfAway(scales[j]/df)))
		}
		if dminf > 0 {
			m[j] = uint8(min(63, roundHalfAway(mins[j]/dminf)))
		}
	}
	binary.LittleEndian.PutUint16(dst, d)
	binary.LittleEndian.PutUint16(dst[2:], dmin)
	packed := dst[4:16]
	for j := range 4 {
		packed[j] = sc[j] | (sc[j+4]>>4)<<6
		packed[j+4] = m[j] | (m[j+4]>>4)<<6
		packed[j+8] = sc[j+4]&0x0f | (m[j+4]&0x0f)<<4
	}
	return df, dminf, sc, m
}

func quantizeQ6KBlock(dst []byte, x []float32) {
	// Per 16-element sub-block: x ≈ d·sc·q with q in -32..31, sc an int8.
	var scales [16]float32
	var maxScale float32
	for j := 0; j < 16; j++ {
		var amax float32
		for _, v := range x[16*j : 16*j+16] {
			amax = max(amax, abs32(v))
		}
		scales[j] = amax / 31
		maxScale = max(maxScale, scales[j])
	}
	d := FloatToHalf(maxScale / 127)
	df := HalfToFloat(d)
	var sc [16]int8
	for j := range sc {
		if df > 0 {
			sc[j] = int8(min(127, roundHalfAway(scales[j]/df)))
		}
	}
	var q [256]uint8 // q + 32, in 0..63
	for i, v := range x {
		step := df * float32(sc[i/16])
		qi := 0
		if step > 0 {
			qi = max(-32, min(31, roundHalfAway(v/step)))
		}
		q[i] = uint8(qi + 32)
	}
	putQ6KBlock(dst, d, &sc, &q)
}

// putQ6KBlock encodes a Q6_K block: the f16 scale d, the sixteen int8
// sub-block scales and the 256 values q+32 (0..63).
func putQ6KBlock(dst []byte, d uint16, sc *[16]int8, q *[QK_K]uint8) {
	clear(dst[:BlockQ6_K])
	for n := 0; n < 2; n++ {
		ql := dst[64*n : 64*n+64]
		qh := dst[128+32*n : 128+32*n+32]
		y := q[128*n : 128*n+128]
		for l := 0; l < 32; l++ {
			ql[l] = y[l]&0xf | (y[l+64]&0xf)<<4
			ql[l+32] = y[l+32]&0xf | (y[l+96]&0xf)<<4
			qh[l] = y[l]>>4 | (y[l+32]>>4)<<2 | (y[l+64]>>4)<<4 | (y[l+96]>>4)<<6
		}
	}
	for j := range sc {
		dst[192+j] = byte(sc[j])
	}
	binary.LittleEndian.PutUint16(dst[208:], d)
}

func abs32(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }

func roundHalfAway(x float32) int { return int(math.Round(float64(x))) }
