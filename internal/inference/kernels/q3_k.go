package kernels

import "encoding/binary"

// Q3_K (ggml type 11), the bulk of llama.cpp's Q3_K_S/M/L files: a block
// of 256 values holds hmask[32] (each value's third bit), qs[64] (its low
// two bits), scales[12] (sixteen 6-bit sub-block scales, packed) and d
// (f16); value p is d·(s−32)·(q−4), s the scale of sub-block p/16 and q in
// 0..7. Q6_K has the same sixteen 16-value sub-blocks with an int8 scale
// each, values in −32..31 and one f16 d, so a Q3_K block is a Q6_K block
// exactly: the same d, scales s−32 (−32..31), values q−4 (−4..3). Where
// the kernel family has no packed Q3_K kernels (packed_q3k.go: the AVX2
// family has them), the loader rewrites Q3_K matrices so (Rewrite), and
// every Q6_K kernel, packed ones included, serves them with the Q6_K
// arithmetic, which is also the arithmetic of a Q3_K block: d·scale first,
// then the value. The cost is memory: 210 bytes a block instead of 110.

// BlockQ3_K is the bytes of a Q3_K block.
const BlockQ3_K = 110

// q3KScale is the signed scale s−32 of sub-block i (0..15) of a Q3_K
// block: the low four bits from scales[i%8] (the high nibble for i ≥ 8),
// the high two from scales[8+i%4] at bit 2·(i/4).
func q3KScale(blk []byte, i int) int8 {
	sc := blk[96:108]
	lo := sc[i%8] & 0x0f
	if i >= 8 {
		lo = sc[i%8] >> 4
	}
	hi := sc[8+i%4] >> (2 * uint(i/4)) & 3
	return int8(lo|hi<<4) - 32
}

// q3KValue is value p (0..255) of a Q3_K block, q−4 in −4..3: the two bits
// 2j of qs[32n+l] and, as 4, bit 4n+j of hmask[l], for p = 128n+32j+l.
func q3KValue(blk []byte, p int) int8 {
	n, j, l := p/128, p%128/32, p%32
	q := int8(blk[32+32*n+l] >> (2 * uint(j)) & 3)
	if blk[l]>>uint(4*n+j)&1 == 0 {
		q -= 4
	}
	return q
}

func dequantizeQ3K(out []float32, blk []byte) {
	d := f16Table[binary.LittleEndian.Uint16(blk[108:])]
	for i := range 16 {
		dl := d * float32(q3KScale(blk, i))
		for p := 16 * i; p < 16*i+16; p++ {
			out[p] = dl * float32(q3KValue(blk, p))
		}
	}
}

// dotQ3KGo is the Q3_K row dot against Q8_K activations, in dotQ6KGo's
// steps: the integer sum of each sub-block's scale times its products,
// then (d·d_x)·isum. The packed kernels give its bits.
func dotQ3KGo(row []byte, a *activation) float32 {
	nb := len(row) / BlockQ3_K
	var sum float32
	for b := range nb {
		blk := row[b*BlockQ3_K : (b+1)*BlockQ3_K]
		d := f16Table[binary.LittleEndian.Uint16(blk[108:])] * a.d[b]
		qx := a.qs[b*QK_K : (b+1)*QK_K]
		var isum int32
		for s := range 16 {
			var si int32
			for p := 16 * s; p < 16*s+16; p++ {
				si += int32(q3KValue(blk, p)) * int32(qx[p])
			}
			isum += int32(q3KScale(blk, s)) * si
		}
		sum += float32(d * float32(isum)) // not fused: the packed kernels' steps
	}
	return sum
}

// q3KAsQ6K writes the Q3_K block src as the Q6_K block dst.
func q3KAsQ6K(dst, src []byte) {
	var sc [16]int8
	var q [QK_K]uint8
	for i := range sc {
		sc[i] = q3KScale(src, i)
	}
	for p := range q {
		q[p] = uint8(q3KValue(src, p) + 32)
	}
	putQ6KBlock(dst, binary.LittleEndian.Uint16(src[108:]), &sc, &q)
}

// quantizeQ3KBlock encodes 256 values as Q3_K: each sub-block's scale maps
// its largest magnitude to −4 (ggml's make_q3_quants without its
// least-squares refinement), the scales are quantised to 6 bits against
// the largest (ggml: iscale = −32/max), then each value to the nearest of
// −4..3 steps. Tests and the benchmark's model files use it; real Q3_K
// files come from llama.cpp's quantiser.
func quantizeQ3KBlock(dst []byte, x []float32) {
	var scales [16]float32
	var maxScale float32
	for j := range 16 {
		var amax, signed float32
		for _, v := range x[16*j : 16*j+16] {
			if abs32(v) > amax {
				amax, signed = abs32(v), v
			}
		}
		scales[j] = signed / -4
		if abs32(scales[j]) > abs32(maxScale) {
			maxScale = scales[j]
		}
	}
	clear(dst[:BlockQ3_K])
	var l [16]int
	var d float32
	if maxScale != 0 {
		iscale := -32 / maxScale
		for j := range l {
			l[j] = max(-32, min(31, roundHalfAway(iscale*scales[j])))
		}
		d = 1 / iscale
	}
	hd := FloatToHalf(d)
	binary.LittleEndian.PutUint16(dst[108:], hd)
	sc := dst[96:108]
	for j, v := range l {
		u := byte(v + 32)
		if j < 8 {
			sc[j] |= u & 0x0f
		} else {
			sc[j-8] |= (u & 0x0f) << 4
		}
		sc[8+j%4] |= (u >> 4) << (2 * uint(j/4))
	}
	df := HalfToFloat(hd)
	for p, v := range x[:QK_K] {
		step := df * float32(l[p/16])
		q := 0
		if step != 0 {
			q = max(-4, min(3, roundHalfAway(v/step)))
		}
		u := byte(q + 4)
		n, j, i := p/128, p%128/32, p%32
		dst[32+32*n+i] |= (u & 3) << (2 * uint(j))
		dst[i] |= (u >> 2) << uint(4*n+j)
	}
}
