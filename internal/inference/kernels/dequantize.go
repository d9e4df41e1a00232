package kernels

import (
	"encoding/binary"
	"fmt"
	"math"

	"partnerapi/internal/inference/gguf"
)

// Block sizes of the quantised formats (elements per block, bytes per block).
const (
	QK8_0      = 32
	BlockQ8_0  = 34
	QK4_0      = 32
	BlockQ4_0  = 18
	QK_K       = 256
	BlockQ4_K  = 144
	BlockQ6_K  = 210
	scaleBytes = 12 // packed 6-bit scales and mins of a Q4_K block
)

// Supported reports whether the kernels handle weights of type t.
func Supported(t gguf.GGMLType) bool {
	switch t {
	case gguf.F32, gguf.F16, gguf.BF16, gguf.Q8_0, gguf.Q4_0, gguf.Q5_0, gguf.Q5_1, gguf.IQ4_NL, gguf.Q2_K, gguf.Q3_K, gguf.Q4_K, gguf.Q5_K, gguf.Q6_K:
		return true
	}
	return false
}

// DequantizeRow expands the n = len(dst) elements encoded in src (type t,
// ggml layout) into dst. It panics when t is unsupported or src does not
// hold exactly n elements: callers validate shapes when loading a model.
func DequantizeRow(dst []float32, t gguf.GGMLType, src []byte) {
	n := len(dst)
	if want := rowBytes(t, n); len(src) != want {
		panic(fmt.Sprintf("kernels: DequantizeRow: %d elements of %v need %d bytes, got %d", n, t, want, len(src)))
	}
	switch t {
	case gguf.F32:
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
		}
	case gguf.F16:
		for i := range dst {
			dst[i] = f16Table[binary.LittleEndian.Uint16(src[2*i:])]
		}
	case gguf.BF16:
		for i := range dst {
			dst[i] = BF16ToFloat(binary.LittleEndian.Uint16(src[2*i:]))
		}
	case gguf.Q8_0:
		for b := 0; b < n/QK8_0; b++ {
			blk := src[b*BlockQ8_0 : (b+1)*BlockQ8_0]
			d := f16Table[binary.LittleEndian.Uint16(blk)]
			out := dst[b*QK8_0 : (b+1)*QK8_0]
			for j := range out {
				out[j] = d * float32(int8(blk[2+j]))
			}
		}
	case gguf.Q4_0:
		for b := 0; b < n/QK4_0; b++ {
			blk := src[b*BlockQ4_0 : (b+1)*BlockQ4_0]
			d := f16Table[binary.LittleEndian.Uint16(blk)]
			out := dst[b*QK4_0 : (b+1)*QK4_0]
			for j := 0; j < 16; j++ {
				q := blk[2+j]
				out[j] = d * float32(int(q&0x0f)-8)
				out[j+16] = d * float32(int(q>>4)-8)
			}
		}
	case gguf.Q5_0:
		for b := 0; b < n/QK5_0; b++ {
			dequantizeQ5_0(dst[b*QK5_0:(b+1)*QK5_0], src[b*BlockQ5_0:(b+1)*BlockQ5_0])
		}
	case gguf.Q5_1:
		for b := 0; b < n/32; b++ {
			dequantizeQ5_1(dst[b*32:(b+1)*32], src[b*BlockQ5_1:(b+1)*BlockQ5_1])
		}
	case gguf.Q4_K:
		for b := 0; b < n/QK_K; b++ {
			dequantizeQ4K(dst[b*QK_K:(b+1)*QK_K], src[b*BlockQ4_K:(b+1)*BlockQ4_K])
		}
	case gguf.Q5_K:
		for b := 0; b < n/QK_K; b++ {
			dequantizeQ5K(dst[b*QK_K:(b+1)*QK_K], src[b*BlockQ5_K:(b+1)*BlockQ5_K])
		}
	case gguf.Q6_K:
		for b := 0; b < n/QK_K; b++ {
			dequantizeQ6K(dst[b*QK_K:(b+1)*QK_K], src[b*BlockQ6_K:(b+1)*BlockQ6_K])
		}
	case gguf.Q2_K:
		for b := 0; b < n/QK_K; b++ {
			dequantizeQ2K(dst[b*QK_K:(b+1)*QK_K], src[b*BlockQ2_K:(b+1)*BlockQ2_K])
		}
	case gguf.Q3_K:
		for b := 0; b < n/QK_K; b++ {
			dequantizeQ3K(dst[b*QK_K:(b+1)*QK_K], src[b*BlockQ3_K:(b+1)*BlockQ3_K])
		}
	case gguf.IQ4_NL:
		for b := 0; b < n/32; b++ {
			dequantizeIQ4NL(dst[b*32:(b+1)*32], src[b*BlockIQ4_NL:(b+1)*BlockIQ4_NL])
		}
	case gguf.Q4_1:
		for b := 0; b < n/32; b++ {
			dequantizeQ4_1(dst[b*32:(b+1)*32], src[b*BlockQ4_1:(b+1)*BlockQ4_1])
		}
	default:
		panic(fmt.Sprintf("kernels: unsupported type %v", t))
	}
}

// rowBytes is the encoded size of n elements of type t (-1 when n is not a
// whole number of blocks or t is neither supported nor rewritten).
func rowBytes(t gguf.GGMLType, n int) int {
	if !(Supported(t) || Rewritten(t)) || n%t.BlockSize() != 0 {
		return -1
	}
	return n / t.BlockSize() * t.TypeSize()
}

// q4KScaleMin unpacks the 6-bit scale and min of sub-block j of a Q4_K block.
func q4KScaleMin(scales []byte, j int) (sc, m uint8) {
	if j < 4 {
		return scales[j] & 63, scales[j+4] & 63
	}
	sc = scales[j+4]&0x0f | (scales[j-4]>>6)<<4
	m = scales[j+4]>>4 | (scales[j]>>6)<<4
	return sc, m
}

// Q4_K block: d f16, dmin f16, scales[12], qs[128].
func dequantizeQ4K(out []float32, blk []byte) {
	d := f16Table[binary.LittleEndian.Uint16(blk)]
	dmin := f16Table[binary.LittleEndian.Uint16(blk[2:])]
	scales := blk[4:16]
	qs := blk[16:144]
	for c := 0; c < 4; c++ {
		sc1, m1 := q4KScaleMin(scales, 2*c)
		sc2, m2 := q4KScaleMin(scales, 2*c+1)
		d1, o1 := d*float32(sc1), dmin*float32(m1)
		d2, o2 := d*float32(sc2), dmin*float32(m2)
		q := qs[32*c : 32*c+32]
		y := out[64*c : 64*c+64]
		for l := 0; l < 32; l++ {
			y[l] = d1*float32(q[l]&0x0f) - o1
			y[l+32] = d2*float32(q[l]>>4) - o2
		}
	}
}

// Q6_K block: ql[128], qh[64], scales[16] int8, d f16.
func dequantizeQ6K(out []float32, blk []byte) {
	d := f16Table[binary.LittleEndian.Uint16(blk[208:])]
	for n := 0; n < 2; n++ {
		ql := blk[64*n : 64*n+64]
		qh := blk[128+32*n : 128+32*n+32]
		sc := blk[192+8*n : 192+8*n+8]
		y := out[128*n : 128*n+128]
		for l := 0; l < 32; l++ {
			is := l / 16
			q1 := int(ql[l]&0xf|(qh[l]>>0&3)<<4) - 32
			q2 := int(ql[l+32]&0xf|(qh[l]>>2&3)<<4) - 32
			q3 := int(ql[l]>>4|(qh[l]>>4&3)<<4) - 32
			q4 := int(ql[l+32]>>4|(qh[l]>>6&3)<<4) - 32
			y[l] = d * float32(int8(sc[is])) * float32(q1)
			y[l+32] = d * float32(int8(sc[is+2])) * float32(q2)
			y[l+64] = d * float32(int8(sc[is+4])) * float32(q3)
			y[l+96] = d * float32(int8(sc[is+6])) * float32(q4)
		}
	}
}
