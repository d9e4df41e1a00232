package kernels

import "encoding/binary"

// Q5_1 (ggml type 7): Q5_0's five-bit values with a minimum instead of an
// offset: a block of 32 holds d and m (f16), qh (the fifth bits) and qs[16]
// (the low four bits, Q5_0's layout); a weight is d·q + m, q in 0..31.
// llama.cpp's Q5_K_M files store as Q5_1 the tensors whose width is not a
// multiple of 256 (its fallback for Q5_K), so those files of small models
// need it. Against Q8_0 activations x = d_x·qx a block contributes
// d·d_x·Σq·qx + m·(d_x·Σqx): the packed kernels take the first term as
// Q5_0's (without the offset) and add the second from the token's block
// term d_x·Σqx (q8Tiles.ms) with one more multiply-add.

const BlockQ5_1 = 24

// q5_1Value is value j (0..31) of a Q5_1 block, q.
func q5_1Value(blk []byte, j int) byte { return fiveBits(blk, 4, j) }

func dequantizeQ5_1(out []float32, blk []byte) {
	d := f16Table[binary.LittleEndian.Uint16(blk)]
	m := f16Table[binary.LittleEndian.Uint16(blk[2:])]
	for j := range 32 {
		out[j] = d*float32(q5_1Value(blk, j)) + m
	}
}

// dotQ5_1Go is the Q5_1 row dot against Q8_0 activations.
func dotQ5_1Go(row []byte, a *activation) float32 {
	nb := len(row) / BlockQ5_1
	var sum float32
	for b := range nb {
		blk := row[b*BlockQ5_1 : (b+1)*BlockQ5_1]
		qx := a.qs[b*32 : (b+1)*32]
		var isum, sx int32
		for j, x := range qx {
			isum += int32(q5_1Value(blk, j)) * int32(x)
			sx += int32(x)
		}
		d := f16Table[binary.LittleEndian.Uint16(blk)]
		m := f16Table[binary.LittleEndian.Uint16(blk[2:])]
		sum += d*a.d[b]*float32(isum) + m*(a.d[b]*float32(sx))
	}
	return sum
}

// quantizeQ5_1Block encodes 32 values as ggml's quantize_row_q5_1_ref does:
// d = (max−min)/31, m = min, q = round((x−min)/d) clamped to 31.
func quantizeQ5_1Block(dst []byte, x []float32) {
	lo, hi := x[0], x[0]
	for _, v := range x[:32] {
		lo, hi = min(lo, v), max(hi, v)
	}
	d := (hi - lo) / 31
	var id float32
	if d != 0 {
		id = 1 / d
	}
	binary.LittleEndian.PutUint16(dst, FloatToHalf(d))
	binary.LittleEndian.PutUint16(dst[2:], FloatToHalf(lo))
	var qh uint32
	q := func(v float32) byte { return byte(min(31, int8((v-lo)*id+0.5))) }
	for j := range 16 {
		x0, x1 := q(x[j]), q(x[j+16])
		dst[8+j] = x0&0x0f | (x1&0x0f)<<4
		qh |= uint32(x0>>4&1)<<uint(j) | uint32(x1>>4&1)<<uint(j+16)
	}
	binary.LittleEndian.PutUint32(dst[4:], qh)
}
