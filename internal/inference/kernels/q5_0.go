package kernels

import (
	"encoding/binary"
	"fmt"

	"partnerapi/internal/inference/gguf"
)

// Q5_0 (ggml type 6): blocks of 32 values, each block its f16 scale d, the
// values' fifth bits (qh, a little-endian uint32, bit j for value j) and
// their low four bits (qs[16], value j's in the low nibble of qs[j] and
// value j+16's in the high one); a weight is d·(q−16), q its five bits.
//
// llama.cpp's Q4_K_M and Q5_K_M files store as Q5_0 the tensors their K-quant
// would not fit (a width that is not a multiple of 256: every matrix of
// SmolLM2-135M and Qwen2.5-0.5B but the latter's down projection), so those
// files need it to load. Every Q5_0 value, q−16 in −16..15, is an int8, and
// a block has Q8_0's one f16 scale per 32 values: a Q5_0 matrix is exactly a
// Q8_0 matrix in fewer bytes. AsQ8_0 rewrites it as one (22 → 34 bytes a
// block), which the model loader does, so every Q8_0 kernel serves it with
// the products of a Q5_0·Q8_0 dot (ggml's vec_dot_q5_0_q8_0); the row dot
// and dequantisation here serve matrices used as they are.

const (
	QK5_0     = 32
	BlockQ5_0 = 22
)

// q5_0Value is value j (0..31) of a Q5_0 block, q−16.
func q5_0Value(blk []byte, j int) int8 { return int8(fiveBits(blk, 2, j)) - 16 }

// fiveBits is the unsigned five-bit value j (0..31) of a Q5_0 or Q5_1 block
// whose qh starts at byte hdr (qs follows it): the low four bits from
// qs[j%16] (the high nibble from 16 on), the fifth bit j of qh.
func fiveBits(blk []byte, hdr, j int) byte {
	qh := binary.LittleEndian.Uint32(blk[hdr:])
	lo := blk[hdr+4+j%16]
	if j >= 16 {
		lo >>= 4
	}
	return lo&0x0f | byte(qh>>uint(j)&1)<<4
}

// AsQ8_0 returns the Q5_0 matrix m rewritten as Q8_0 (Rewrite), the same
// weights in a new heap buffer; other matrices come back unchanged.
func AsQ8_0(m Matrix) Matrix {
	if m.Type != gguf.Q5_0 {
		return m
	}
	w, err := Rewrite(m)
	if err != nil {
		panic(fmt.Sprintf("kernels: AsQ8_0: %v", err))
	}
	return w
}

// q5_0AsQ8_0 writes the Q5_0 block src as the Q8_0 block dst: the same d,
// the values q−16.
func q5_0AsQ8_0(dst, src []byte) {
	dst[0], dst[1] = src[0], src[1]
	for j := range QK5_0 {
		dst[2+j] = byte(q5_0Value(src, j))
	}
}

func dequantizeQ5_0(out []float32, blk []byte) {
	d := f16Table[binary.LittleEndian.Uint16(blk)]
	for j := range QK5_0 {
		out[j] = d * float32(q5_0Value(blk, j))
	}
}

// dotQ5_0Go is the Q5_0 row dot against Q8_0 activations.
func dotQ5_0Go(row []byte, a *activation) float32 {
	nb := len(row) / BlockQ5_0
	var sum float32
	for b := range nb {
		blk := row[b*BlockQ5_0 : (b+1)*BlockQ5_0]
		qx := a.qs[b*QK5_0 : (b+1)*QK5_0]
		var isum int32
		for j, x := range qx {
			isum += int32(q5_0Value(blk, j)) * int32(x)
		}
		sum += f16Table[binary.LittleEndian.Uint16(blk)] * a.d[b] * float32(isum)
	}
	return sum
}

// quantizeQ5_0Block encodes 32 values as ggml's quantize_row_q5_0_ref
// does: the value of largest magnitude maps to −16, values round half up
// after the offset of 16.5 (truncation), clamped to 31.
func quantizeQ5_0Block(dst []byte, x []float32) {
	var amax, vmax float32
	for _, v := range x[:QK5_0] {
		if a := abs32(v); amax < a {
			amax, vmax = a, v
		}
	}
	d := vmax / -16
	var id float32
	if d != 0 {
		id = 1 / d
	}
	binary.LittleEndian.PutUint16(dst, FloatToHalf(d))
	var qh uint32
	q := func(v float32) byte { return byte(min(31, int8(v*id+16.5))) }
	for j := range QK5_0 / 2 {
		x0, x1 := q(x[j]), q(x[j+16])
		dst[6+j] = x0&0x0f | (x1&0x0f)<<4
		qh |= uint32(x0>>4&1)<<uint(j) | uint32(x1>>4&1)<<uint(j+16)
	}
	binary.LittleEndian.PutUint32(dst[2:], qh)
}
