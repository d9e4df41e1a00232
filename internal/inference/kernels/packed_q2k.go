package kernels

import (
	"encoding/binary"

	"partnerapi/internal/inference/gguf"
)

// Repacked Q2_K weights for the AVX2 family (q2_k.go). For group g of G
// rows and superblock b, at packed[(g·nb+b)·100·G:]:
//
//   - [0, 2G): the rows' d (f16), [2G, 4G) their dmin;
//   - [4G, 20G): the four-bit scales in pairs, those of sub-blocks 2p and
//     2p+1 of row i at 4G+2G·p+2i and +1 (VPMOVZXBW makes them an int16
//     pair per lane); [20G, 36G) the minimums likewise;
//   - [36G, 100G): the two-bit values, sub-blocks 4q..4q+3 in 16G bytes:
//     chunk c (4G bytes) holds at 4i+k the bits of value 4c+k of row i for
//     sub-block 4q+m at bits 2m, 2m+1 (packed Q6_K's high-bit plane).
//
// 100 bytes a row and superblock against GGUF's 84. The kernels' integer
// sums and float steps are dotQ2KGo's, so a row's result is its bits
// whatever the batch. The kernels are AVX2 code, so the AVX-512 family
// packs Q2_K in the AVX2 family's 8-row groups too and runs them
// (packGroupFor): no other type holds Q2_K's weights exactly, and
// dotQ2KGo, the only alternative, decoded a 1B Q2_K model at 0.6 tokens a
// second there. The pure-Go family runs dotQ2KGo.

// q2KPackBytes is the size of one (group, superblock) of packed Q2_K with
// groups of `group` rows.
func q2KPackBytes(group int) int { return 100 * group }

// packsQ2K reports whether Pack repacks Q2_K matrices.
func packsQ2K() bool { return packsKQuant(gguf.Q2_K) }

// packQ2KGroup writes group g of the Q2_K matrix m in the packed layout to
// dst.
func packQ2KGroup(dst []byte, m Matrix, g, group int) {
	rb, nb, gb := m.RowBytes(), m.Cols/QK_K, q2KPackBytes(group)
	sc, mn, lo := 4*group, 20*group, 36*group
	for b := range nb {
		o := dst[b*gb : (b+1)*gb]
		for i := range group {
			blk := m.Data[(g*group+i)*rb+b*BlockQ2_K:][:BlockQ2_K]
			binary.LittleEndian.PutUint16(o[2*i:], binary.LittleEndian.Uint16(blk[80:]))
			binary.LittleEndian.PutUint16(o[2*group+2*i:], binary.LittleEndian.Uint16(blk[82:]))
			for s := range 16 {
				o[sc+2*group*(s/2)+2*i+s%2] = blk[s] & 0x0f
				o[mn+2*group*(s/2)+2*i+s%2] = blk[s] >> 4
				lo := o[lo+16*group*(s/4)+4*i:]
				for c := range 4 {
					for k := range 4 {
						lo[4*group*c+k] |= q2KValue(blk, 16*s+4*c+k) << (2 * uint(s%4))
					}
				}
			}
		}
	}
}
