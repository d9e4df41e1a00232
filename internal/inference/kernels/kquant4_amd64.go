//go:build !purego

package kernels

import (
	"encoding/binary"
	"unsafe"
)

// q4KBlockX4AVX2 is q4KBlockAVX2 for four tokens: x[t] points at token t's
// 256 int8 values of the block, out[t] receives its integer sum.
//
//go:noescape
func q4KBlockX4AVX2(qs *byte, x *[4]*int8, sc *[8]int16, out *[4]int32)

// q6KBlockX4AVX2 is q6KBlockAVX2 for four tokens.
//
//go:noescape
func q6KBlockX4AVX2(blk *byte, x *[4]*int8, out *[4]int32)

func init() {
	if hasAVX2 {
		dot4Q4K = dotQ4Kx4Asm
		dot4Q6K = dotQ6Kx4Asm
	}
}

// dotQ4Kx4Asm is dotQ4KAsm for four tokens: each block's nibbles and scales
// are unpacked once. The integer sums are exact and the float arithmetic per
// token is dotQ4KAsm's (q4KAccumulate), so each result equals dotQ4KAsm's
// bit for bit.
func dotQ4Kx4Asm(row []byte, a []activation) [4]float32 {
	nb := len(row) / BlockQ4_K
	a = a[:4]
	for t := range a {
		_ = a[t].qs[:nb*QK_K]
		_ = a[t].sums[:nb*16]
		_ = a[t].d[:nb]
	}
	var sums [4]float32
	var sc [8]int16
	var m [8]int32
	var xs [4]*int8
	var isum [4]int32
	for b := 0; b < nb; b++ {
		blk := row[b*BlockQ4_K : (b+1)*BlockQ4_K]
		for j := 0; j < 8; j++ {
			s, mj := q4KScaleMin(blk[4:16], j)
			sc[j], m[j] = int16(s), int32(mj)
		}
		for t := range xs {
			xs[t] = &a[t].qs[b*QK_K]
		}
		q4KBlockX4(&blk[16], &xs, &sc, &isum)
		dw := f16Table[binary.LittleEndian.Uint16(blk)]
		dmw := f16Table[binary.LittleEndian.Uint16(blk[2:])]
		for t := range a {
			s := a[t].sums[b*16 : b*16+16]
			var msum int32
			for j := 0; j < 8; j++ {
				msum += m[j] * (s[2*j] + s[2*j+1])
			}
			sums[t] = q4KAccumulate(sums[t], dw, dmw, a[t].d[b], isum[t], msum)
		}
	}
	return sums
}

// dotQ6Kx4Asm is dotQ6KAsm for four tokens, equal to it bit for bit.
func dotQ6Kx4Asm(row []byte, a []activation) [4]float32 {
	nb := len(row) / BlockQ6_K
	a = a[:4]
	for t := range a {
		_ = a[t].qs[:nb*QK_K]
		_ = a[t].sums[:nb*16]
		_ = a[t].d[:nb]
	}
	var sums [4]float32
	var xs [4]*int8
	var isum [4]int32
	for b := 0; b < nb; b++ {
		blk := row[b*BlockQ6_K : (b+1)*BlockQ6_K]
		for t := range xs {
			xs[t] = &a[t].qs[b*QK_K]
		}
		q6KBlockX4(&blk[0], &xs, &isum)
		dw := f16Table[binary.LittleEndian.Uint16(blk[208:])]
		sc := (*[16]int8)(unsafe.Pointer(&blk[192]))
		for t := range a {
			s := a[t].sums[b*16 : b*16+16]
			var off int32
			for g := 0; g < 16; g++ {
				off += int32(sc[g]) * s[g]
			}
			sums[t] = q6KAccumulate(sums[t], dw, a[t].d[b], isum[t]-32*off)
		}
	}
	return sums
}
