package kernels

import "encoding/binary"

// Q2_K (ggml type 10), the bulk of llama.cpp's Q2_K files: a block of 256
// values holds scales[16] (per 16-value sub-block, the scale in the low
// nibble and the minimum in the high one), qs[64] (each value's two bits),
// d and dmin (f16); value p is d·sc·q − dmin·m, q in 0..3, for sub-block
// p/16, the two bits 2j of qs[32n+l] for p = 128n+32j+l (Q3_K's low bits).
// No supported type holds that exactly (each 16 values carry their own
// minimum, under a second f16 scale), so Q2_K has its own row dot and, on
// AVX2, packed kernels (packed_q2k.go); other kernel families run the Go
// row dot.

// BlockQ2_K is the bytes of a Q2_K block.
const BlockQ2_K = 84

// q2KValue is value p (0..255) of a Q2_K block, q in 0..3.
func q2KValue(blk []byte, p int) byte {
	n, j, l := p/128, p%128/32, p%32
	return blk[16+32*n+l] >> (2 * uint(j)) & 3
}

func dequantizeQ2K(out []float32, blk []byte) {
	d := f16Table[binary.LittleEndian.Uint16(blk[80:])]
	dmin := f16Table[binary.LittleEndian.Uint16(blk[82:])]
	for s := range 16 {
		dl, ml := d*float32(blk[s]&0x0f), dmin*float32(blk[s]>>4)
		for p := 16 * s; p < 16*s+16; p++ {
			out[p] = dl*float32(q2KValue(blk, p)) - ml
		}
	}
}

// dotQ2KGo is the Q2_K row dot against Q8_K activations: per block the
// integer sums isum = Σ sc·Σq·x and msum = Σ m·Σx over the sub-blocks, then
// sum + (d·d_x)·isum − (dmin·d_x)·msum in that order (the packed kernels'
// steps, which give its bits).
func dotQ2KGo(row []byte, a *activation) float32 {
	nb := len(row) / BlockQ2_K
	var sum float32
	for b := range nb {
		blk := row[b*BlockQ2_K : (b+1)*BlockQ2_K]
		qx := a.qs[b*QK_K : (b+1)*QK_K]
		var isum, mneg int32
		for s := range 16 {
			var si, sx int32
			for p := 16 * s; p < 16*s+16; p++ {
				si += int32(q2KValue(blk, p)) * int32(qx[p])
				sx += int32(qx[p])
			}
			isum += int32(blk[s]&0x0f) * si
			mneg -= int32(blk[s]>>4) * sx
		}
		d := f16Table[binary.LittleEndian.Uint16(blk[80:])] * a.d[b]
		dm := f16Table[binary.LittleEndian.Uint16(blk[82:])] * a.d[b]
		sum += float32(d * float32(isum))
		sum += float32(dm * float32(mneg))
	}
	return sum
}

// quantizeQ2KBlock encodes 256 values as Q2_K: per sub-block the minimum
// (at most 0) and the step (max−min)/3, both quantised to four bits against
// the block's largest (ggml's layout, not its least-squares search), then
// each value to the nearest of 0..3 steps above the minimum. Tests use it.
func quantizeQ2KBlock(dst []byte, x []float32) {
	var steps, mins [16]float32
	var maxStep, maxMin float32
	for s := range 16 {
		lo, hi := float32(0), x[16*s]
		for _, v := range x[16*s : 16*s+16] {
			lo, hi = min(lo, v), max(hi, v)
		}
		steps[s], mins[s] = (hi-lo)/3, -lo
		maxStep, maxMin = max(maxStep, steps[s]), max(maxMin, mins[s])
	}
	clear(dst[:BlockQ2_K])
	hd, hm := FloatToHalf(maxStep/15), FloatToHalf(maxMin/15)
	binary.LittleEndian.PutUint16(dst[80:], hd)
	binary.LittleEndian.PutUint16(dst[82:], hm)
	d, dmin := HalfToFloat(hd), HalfToFloat(hm)
	for s := range 16 {
		var sc, m int
		if d > 0 {
			sc = max(0, min(15, roundHalfAway(steps[s]/d)))
		}
		if dmin > 0 {
			m = max(0, min(15, roundHalfAway(mins[s]/dmin)))
		}
		dst[s] = byte(sc) | byte(m)<<4
		step, off := d*float32(sc), dmin*float32(m)
		for p := 16 * s; p < 16*s+16; p++ {
			q := 0
			if step > 0 {
				q = max(0, min(3, roundHalfAway((x[p]+off)/step)))
			}
			n, j, l := p/128, p%128/32, p%32
			dst[16+32*n+l] |= byte(q) << (2 * uint(j))
		}
	}
}
