package kernels

import "encoding/binary"

// Repacked Q6_K weights for the AVX-512 VNNI family (packed_q4k.go says
// why: the block kernels over the GGUF layout ran a Q6_K product at 5–11
// multiply-adds per ns on a core, whatever the tokens). Q4_K_M files keep
// the output projection, the largest matrix of a decode step, and some
// value and down projections in Q6_K.
//
// For group g of 16 rows and superblock b (256 values, sixteen sub-blocks
// of 16 with one int8 scale each), at packed[(g·nb+b)·210·16:], G = 16:
//
//   - [0, 2G): the rows' d (f16);
//   - [2G, 18G): the scales in pairs, those of sub-blocks 2p and 2p+1 of
//     row i at 2G+2G·p+2i and +1 (VPMOVSXBW makes them an int16 pair per
//     lane);
//   - [18G, 146G): the low four bits of the six-bit values, sub-blocks 2p
//     and 2p+1 in 16G bytes: chunk c (4G bytes) holds row i's values
//     4c..4c+3 of sub-block 2p at 4i+k in the low nibbles and of 2p+1 in
//     the high ones;
//   - [146G, 210G): the high two bits, sub-blocks 4q..4q+3 in 16G bytes:
//     chunk c holds at 4i+k the bits of value 4c+k of row i for sub-block
//     4q+m at bits 2m, 2m+1.
//
// The size of GGUF's (210 bytes a row and superblock). The kernels take
// the unsigned six-bit values and add the offset of −32 back through the
// token's 16-value sums (kTiles.bs6), which is dotQ6KGo's integer sum
// exactly; its float steps are the reference's, so a row's result is its
// bits whatever the batch.

// q6KPackBytes is the size of one (group, superblock) of packed Q6_K with
// groups of `group` rows.
func q6KPackBytes(group int) int { return 210 * group }

// q6KValues decodes the 256 values of a Q6_K block as their unsigned six
// bits (the weight is d·scale·(q−32)), in dequantizeQ6K's order.
func q6KValues(q *[QK_K]byte, blk []byte) {
	for n := range 2 {
		ql, qh := blk[64*n:][:64], blk[128+32*n:][:32]
		v := q[128*n:][:128]
		for l := range 32 {
			v[l] = ql[l]&0x0f | (qh[l]&3)<<4
			v[l+32] = ql[l+32]&0x0f | (qh[l]>>2&3)<<4
			v[l+64] = ql[l]>>4 | (qh[l]>>4&3)<<4
			v[l+96] = ql[l+32]>>4 | (qh[l]>>6&3)<<4
		}
	}
}

// packQ6KGroup writes group g of the Q6_K matrix m in the packed layout to
// dst.
func packQ6KGroup(dst []byte, m Matrix, g, group int) {
	rb, nb, gb := m.RowBytes(), m.Cols/QK_K, q6KPackBytes(group)
	sc, lo, hi := 2*group, 18*group, 146*group
	var q [QK_K]byte
	for b := range nb {
		o := dst[b*gb : (b+1)*gb]
		for i := range group {
			blk := m.Data[(g*group+i)*rb+b*BlockQ6_K:][:BlockQ6_K]
			binary.LittleEndian.PutUint16(o[2*i:], binary.LittleEndian.Uint16(blk[208:]))
			q6KValues(&q, blk)
			for s := range 16 {
				o[sc+2*group*(s/2)+2*i+s%2] = blk[192+s]
				lshift, hshift := 4*uint(s%2), 2*uint(s%4)
				lo, hi := o[lo+16*group*(s/2)+4*i:], o[hi+16*group*(s/4)+4*i:]
				for c := range 4 {
					for k := range 4 {
						v := q[16*s+4*c+k]
						lo[4*group*c+k] |= (v & 0x0f) << lshift
						hi[4*group*c+k] |= (v >> 4) << hshift
					}
				}
			}
		}
	}
}
