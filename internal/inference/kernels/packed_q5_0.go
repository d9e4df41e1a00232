package kernels

import "partnerapi/internal/inference/gguf"

// Repacked Q5_0 weights for both packed families (16-row groups for AVX-512
// VNNI, 8-row ones for AVX2). The loader otherwise
// rewrites Q5_0 as Q8_0 (q5_0.go), 34 bytes a block instead of 22, which a
// memory-bound decode step reads at Q8_0's cost. Packed, a block of a
// G-row group is the packed Q4_0 block (the f16 scales, then the low four
// bits in four chunks: packed.go) followed by a 4G-byte bit plane (G = 16 or 8):
// at 4i+k, bit j holds the fifth bit of the value that chunk byte 4i+k's
// operand j carries (operands 0–3 the low nibbles of chunks 0–3, 4–7 their
// high nibbles), which the kernels OR in as bit 4. The values are then the
// unsigned q (0..31) and the token's correction −16·Σx (q8Tiles.c16) takes
// the offset out, so a product's integer sums equal those of the Q8_0
// rewrite and the results are its bits (TestPackedMatchesQ8_0Rewrite). 22
// bytes a row and block, as in GGUF.
//
// Only matrices of whole groups are packed (packsQ5Matrix): the tail
// rows of other families' packed matrices take the one-row tiles, which
// have no Q5_0 form, so other Q5_0 matrices keep the Q8_0 rewrite.

// packsQ5 reports whether this CPU has the packed Q5_0 and Q5_1 kernels
// (set at start-up where the assembly is in use).
var packsQ5 bool

// packsQ5Matrix reports whether Pack repacks the Q5_0 or Q5_1 matrix m.
func packsQ5Matrix(m Matrix) bool {
	return packsQ5 && tilePacked && m.Rows%packGroup == 0
}

// packedQ5 reports whether w's products go through the packed Q5_0, Q5_1
// or IQ4_NL kernels (packed matrices of whole groups over the Q8_0
// activations of q8Tiles, like Q5_0's).
func packedQ5(w Matrix) bool {
	return (w.Type == gguf.Q5_0 || w.Type == gguf.Q5_1 || w.Type == gguf.IQ4_NL) && w.packed != nil && packsQ5 && tilePacked && w.packedGroup == packGroup
}

// packsIQ4NLMatrix reports whether Pack repacks the IQ4_NL matrix m: only
// the AVX2 family has IQ4_NL kernels (iq4_nl.go).
func packsIQ4NLMatrix(m Matrix) bool {
	return packsQ5Matrix(m) && packGroup == packGroupKAVX2 // the AVX2 family's 8-row groups
}

// packQ5Group writes group g of the Q5_0 or Q5_1 matrix m in the packed
// layout to dst: the rows' f16 scales (2G bytes), for Q5_1 their f16
// minimums (2G more), the low four bits in four chunks of 4G bytes and the
// 4G-byte plane of fifth bits: 22 or 24 bytes a row and block, as in GGUF.
func packQ5Group(dst []byte, m Matrix, g, group int) {
	bs, hdr := BlockQ5_0, 2 // hdr: the block bytes before qh
	if m.Type == gguf.Q5_1 {
		bs, hdr = BlockQ5_1, 4
	}
	rb, nb, gb := m.RowBytes(), m.Cols/QK5_0, group*bs
	qo := hdr * group // the nibble chunks
	for b := range nb {
		o := dst[b*gb : (b+1)*gb]
		for i := range group {
			blk := m.Data[(g*group+i)*rb+b*bs:][:bs]
			for h := 0; h < hdr; h += 2 {
				o[h*group+2*i], o[h*group+2*i+1] = blk[h], blk[h+1]
			}
			for c := range 4 {
				for k := range 4 {
					lo, hi := fiveBits(blk, hdr, 4*c+k), fiveBits(blk, hdr, 16+4*c+k)
					o[qo+4*group*c+4*i+k] = lo&0x0f | (hi&0x0f)<<4
					o[qo+16*group+4*i+k] |= (lo>>4)<<uint(c) | (hi>>4)<<uint(4+c)
				}
			}
		}
	}
}
