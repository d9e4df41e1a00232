package kernels

import "encoding/binary"

// Q5_K (ggml type 13): Q4_K with a fifth bit per value. A block of 256
// values holds d and dmin (f16), the same twelve bytes of six-bit scales
// and minimums for its eight 32-value sub-blocks, qh[32] (bit j of qh[l] is
// the fifth bit of value l of sub-block j) and qs[128] (the low four bits,
// as Q4_K's); a weight is d·sc_j·q − dmin·m_j, q in 0..31. Q5_K_M files of
// models whose widths are multiples of 256 are made of Q5_K and Q6_K.

// BlockQ5_K is the bytes of one Q5_K block.
const BlockQ5_K = 176

// q5KValues decodes the 256 values of a Q5_K block (0..31), in
// dequantisation order.
func q5KValues(q *[QK_K]byte, blk []byte) {
	qh, qs := blk[16:48], blk[48:176]
	for j := range 8 {
		shift := 4 * uint(j%2)
		ql := qs[32*(j/2):][:32]
		v := q[32*j:][:32]
		for l := range 32 {
			v[l] = ql[l]>>shift&0x0f | (qh[l]>>uint(j)&1)<<4
		}
	}
}

func dequantizeQ5K(out []float32, blk []byte) {
	d := f16Table[binary.LittleEndian.Uint16(blk)]
	dmin := f16Table[binary.LittleEndian.Uint16(blk[2:])]
	var q [QK_K]byte
	q5KValues(&q, blk)
	for j := range 8 {
		sc, m := q4KScaleMin(blk[4:16], j)
		d1, m1 := d*float32(sc), dmin*float32(m)
		for l := range 32 {
			out[32*j+l] = d1*float32(q[32*j+l]) - m1
		}
	}
}

// dotQ5KGo is the Q5_K row dot against Q8_K activations: dotQ4KGo's
// arithmetic over five-bit values.
func dotQ5KGo(row []byte, a *activation) float32 {
	nb := len(row) / BlockQ5_K
	var sum float32
	var q [QK_K]byte
	for b := range nb {
		blk := row[b*BlockQ5_K : (b+1)*BlockQ5_K]
		d := f16Table[binary.LittleEndian.Uint16(blk)] * a.d[b]
		dmin := f16Table[binary.LittleEndian.Uint16(blk[2:])] * a.d[b]
		q5KValues(&q, blk)
		qx := a.qs[b*QK_K : (b+1)*QK_K]
		sums := a.sums[b*16 : b*16+16]
		var isum, msum int32
		for j := range 8 {
			sc, m := q4KScaleMin(blk[4:16], j)
			var s int32
			for l := range 32 {
				s += int32(q[32*j+l]) * int32(qx[32*j+l])
			}
			isum += int32(sc) * s
			msum += int32(m) * (sums[2*j] + sums[2*j+1])
		}
		// Each product rounded on its own (no fused multiply-add), the
		// steps the packed kernels take.
		sum += float32(d*float32(isum)) - float32(dmin*float32(msum))
	}
	return sum
}

// quantizeQ5KBlock encodes 256 values as Q5_K with quantizeQ4KBlock's plain
// min/max fit per sub-block (31 steps instead of 15).
func quantizeQ5KBlock(dst []byte, x []float32) {
	df, dminf, sc, m := fitKScales(dst, x, 31)
	qh, qs := dst[16:48], dst[48:176]
	clear(qh)
	clear(qs)
	for j := range 8 {
		step, off := df*float32(sc[j]), dminf*float32(m[j])
		for l := range 32 {
			q := 0
			if step > 0 {
				q = max(0, min(31, roundHalfAway((x[32*j+l]+off)/step)))
			}
			qs[32*(j/2)+l] |= byte(q&0x0f) << (4 * uint(j%2))
			qh[l] |= byte(q>>4) << uint(j)
		}
	}
}
