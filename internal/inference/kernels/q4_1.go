package kernels

import "encoding/binary"

// Q4_1 (ggml type 3), the older four-bit type with a minimum: a block of 32
// values holds d and m (f16) and sixteen bytes of nibbles (value j in the
// low nibble of byte j, value j+16 in its high nibble); a weight is d·q + m,
// q in 0..15. That is a Q5_1 block whose fifth bits are all zero, so the
// loader rewrites Q4_1 as Q5_1 (Rewrite), bit for bit, and the Q5_1 kernels
// serve it (24 bytes a block instead of 20).

// BlockQ4_1 is the bytes of a Q4_1 block.
const BlockQ4_1 = 20

func dequantizeQ4_1(out []float32, blk []byte) {
	d := f16Table[binary.LittleEndian.Uint16(blk)]
	m := f16Table[binary.LittleEndian.Uint16(blk[2:])]
	for j := range 16 {
		out[j] = d*float32(blk[4+j]&0x0f) + m
		out[j+16] = d*float32(blk[4+j]>>4) + m
	}
}

// q4_1AsQ5_1 writes the Q4_1 block src as the Q5_1 block dst: the same d,
// m and nibbles, no fifth bits.
func q4_1AsQ5_1(dst, src []byte) {
	copy(dst[:4], src[:4])
	clear(dst[4:8])
	copy(dst[8:24], src[4:20])
}

// quantizeQ4_1Block encodes 32 values as ggml's quantize_row_q4_1_ref does:
// d = (max−min)/15, m = min, q = round((x−min)/d) clamped to 15.
func quantizeQ4_1Block(dst []byte, x []float32) {
	lo, hi := x[0], x[0]
	for _, v := range x[:32] {
		lo, hi = min(lo, v), max(hi, v)
	}
	d := (hi - lo) / 15
	var id float32
	if d != 0 {
		id = 1 / d
	}
	binary.LittleEndian.PutUint16(dst, FloatToHalf(d))
	binary.LittleEndian.PutUint16(dst[2:], FloatToHalf(lo))
	q := func(v float32) byte { return byte(min(15, int8((v-lo)*id+0.5))) }
	for j := range 16 {
		dst[4+j] = q(x[j]) | q(x[j+16])<<4
	}
}
