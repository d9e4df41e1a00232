package kernels

import "encoding/binary"

// IQ4_NL (ggml type 20): a block of 32 values holds d (f16) and sixteen
// bytes of 4-bit indices (value j in the low nibble of byte j, value j+16
// in its high nibble) into a fixed non-linear table of int8 levels; a
// weight is d·level. llama.cpp stores as IQ4_NL the tensors of Q2_K, Q3_K
// and IQ4_XS files whose rows are not a multiple of 256, so Q3_K_M files
// of SmolLM2-135M and Qwen2.5-0.5B need it. The levels are int8 and the
// block has Q8_0's one f16 scale per 32 values: the AVX2 family packs it in
// the Q4_0 layout (the same bytes) and its kernels look the levels up and
// run the Q8_0 arithmetic, giving the Q8_0 rewrite's bits; elsewhere the
// loader rewrites it as Q8_0 (Rewrite), bit for bit. ggml's own IQ4_NL dot
// also sums level·x as integers and scales once per block.

// BlockIQ4_NL is the bytes of an IQ4_NL block.
const BlockIQ4_NL = 18

// iq4NLLevels is ggml's kvalues_iq4nl.
var iq4NLLevels = [16]int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

// iq4NLValue is value j (0..31) of an IQ4_NL block, its level.
func iq4NLValue(blk []byte, j int) int8 {
	b := blk[2+j%16]
	if j >= 16 {
		return iq4NLLevels[b>>4]
	}
	return iq4NLLevels[b&0x0f]
}

func dequantizeIQ4NL(out []float32, blk []byte) {
	d := f16Table[binary.LittleEndian.Uint16(blk)]
	for j := range 32 {
		out[j] = d * float32(iq4NLValue(blk, j))
	}
}

// dotIQ4NLGo is the IQ4_NL row dot against Q8_0 activations: the Q8_0 row
// dot's steps over the levels.
func dotIQ4NLGo(row []byte, a *activation) float32 {
	nb := len(row) / BlockIQ4_NL
	var sum float32
	for b := range nb {
		blk := row[b*BlockIQ4_NL : (b+1)*BlockIQ4_NL]
		qx := a.qs[b*32 : (b+1)*32]
		var isum int32
		for j, x := range qx {
			isum += int32(iq4NLValue(blk, j)) * int32(x)
		}
		sum += f16Table[binary.LittleEndian.Uint16(blk)] * a.d[b] * float32(isum)
	}
	return sum
}

// iq4NLAsQ8_0 writes the IQ4_NL block src as the Q8_0 block dst.
func iq4NLAsQ8_0(dst, src []byte) {
	dst[0], dst[1] = src[0], src[1]
	for j := range 32 {
		dst[2+j] = byte(iq4NLValue(src, j))
	}
}

// quantizeIQ4NLBlock encodes 32 values as IQ4_NL with ggml's first
// estimate of the scale (the value of largest magnitude on the level −127)
// and each value's nearest level, without ggml's search over nearby scales.
// Tests and the benchmark's model files use it.
func quantizeIQ4NLBlock(dst []byte, x []float32) {
	var amax, signed float32
	for _, v := range x[:32] {
		if abs32(v) > amax {
			amax, signed = abs32(v), v
		}
	}
	d := FloatToHalf(signed / -127)
	binary.LittleEndian.PutUint16(dst, d)
	df := HalfToFloat(d)
	for j := range 16 {
		dst[2+j] = nearestIQ4NL(x[j], df) | nearestIQ4NL(x[j+16], df)<<4
	}
}

// nearestIQ4NL is the index of the level nearest to v/d (0 when d is 0).
func nearestIQ4NL(v, d float32) byte {
	if d == 0 {
		return 0
	}
	t := v / d
	best, dist := 0, float32(-1)
	for i, l := range iq4NLLevels {
		if e := abs32(t - float32(l)); dist < 0 || e < dist {
			best, dist = i, e
		}
	}
	return byte(best)
}
