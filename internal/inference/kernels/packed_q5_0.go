package kernels

import "partnerapi/internal/inference/gguf"

// Repacked Q5_0 weights for the AVX-512 VNNI family. The loader otherwise
// rewrites Q5_0 as Q8_0 (q5_0.go), 34 bytes a block instead of 22, which a
// memory-bound decode step reads at Q8_0's cost. Packed, a block of a
// 16-row group is the packed Q4_0 block (the f16 scales, then the low four
// bits in four chunks: packed.go) followed by a 4G-byte bit plane, G = 16:
// at 4i+k, bit j holds the fifth bit of the value that chunk byte 4i+k's
// operand j carries (operands 0–3 the low nibbles of chunks 0–3, 4–7 their
// high nibbles), which the kernels OR in as bit 4. The values are then the
// unsigned q (0..31) and the token's correction −16·Σx (q8Tiles.c16) takes
// the offset out, so a product's integer sums equal those of the Q8_0
// rewrite and the results are its bits (TestPackedQ5_0MatchesQ8_0). 22
// bytes a row and block, as in GGUF.
//
// Only matrices of whole groups are packed (packsQ5_0Matrix): the tail
// rows of other families' packed matrices take the one-row tiles, which
// have no Q5_0 form, so other Q5_0 matrices keep the Q8_0 rewrite.

// packsQ5_0 reports whether this CPU has the packed Q5_0 kernels (set at
// start-up where the assembly is in use).
var packsQ5_0 bool

// packsQ5_0Matrix reports whether Pack repacks the Q5_0 matrix m.
func packsQ5_0Matrix(m Matrix) bool {
	return packsQ5_0 && tilePacked && packGroup == packGroupK && m.Rows%packGroup == 0
}

// packedQ5_0 reports whether w's products go through the packed Q5_0 or
// Q5_1 kernels.
func packedQ5_0(w Matrix) bool {
	return (w.Type == gguf.Q5_0 || w.Type == gguf.Q5_1) && w.packed != nil && packsQ5_0 && tilePacked && w.packedGroup == packGroup
}

// packQ5_0Group writes group g of the Q5_0 matrix m in the packed layout
// to dst.
func packQ5_0Group(dst []byte, m Matrix, g, group int) {
	rb, nb, gb := m.RowBytes(), m.Cols/QK5_0, group*BlockQ5_0
	for b := range nb {
		o := dst[b*gb : (b+1)*gb]
		for i := range group {
			blk := m.Data[(g*group+i)*rb+b*BlockQ5_0:][:BlockQ5_0]
			o[2*i], o[2*i+1] = blk[0], blk[1]
			for c := range 4 {
				for k := range 4 {
					lo, hi := q5_0Value(blk, 4*c+k)+16, q5_0Value(blk, 16+4*c+k)+16
					o[2*group+4*group*c+4*i+k] = byte(lo)&0x0f | (byte(hi)&0x0f)<<4
					plane := &o[18*group+4*i+k]
					*plane |= (byte(lo)>>4)<<uint(c) | (byte(hi)>>4)<<uint(4+c)
				}
			}
		}
	}
}
