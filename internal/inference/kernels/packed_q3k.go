package kernels

import (
	"encoding/binary"

	"partnerapi/internal/inference/gguf"
)

// Repacked Q3_K weights for the AVX2 family. Without them the loader
// rewrites Q3_K as Q6_K (q3_k.go), 210 bytes a block instead of 110, which a
// memory-bound decode step reads at Q6_K's cost. The layout is the packed
// Q6_K one (packed_q6k.go) without its high-bit plane: for group g of G
// rows and superblock b, at packed[(g·nb+b)·146·G:],
//
//   - [0, 2G): the rows' d (f16);
//   - [2G, 18G): the signed scales s−32 in pairs, those of sub-blocks 2p
//     and 2p+1 of row i at 2G+2G·p+2i and +1;
//   - [18G, 146G): the three-bit values q (0..7) as nibbles, sub-blocks 2p
//     and 2p+1 in 16G bytes: chunk c (4G bytes) holds row i's values
//     4c..4c+3 of sub-block 2p at 4i+k in the low nibbles and of 2p+1 in
//     the high ones.
//
// 146 bytes a row and superblock against GGUF's 110: a two-bit and a
// one-bit plane (114 bytes) took five instructions a value register to
// take apart instead of one or two, and against the Q6_K rewrite measured
// 1.57× for one token, 1.13× for four and 1.07× for ten, where nibbles
// measure 1.64×, 1.29–1.35× and 1.29–1.31× (BenchmarkPackedQ3KSideBySide,
// Zen 3).
// The kernels take the unsigned values and add the offset of −4 back
// through the token's 16-value sums, which is dotQ3KGo's integer sum
// exactly; the float steps are its own, so a row's result is its bits
// whatever the batch. Only the AVX2 family has these kernels: the AVX-512
// family keeps the Q6_K rewrite.

// q3KPackBytes is the size of one (group, superblock) of packed Q3_K with
// groups of `group` rows.
func q3KPackBytes(group int) int { return 146 * group }

// packsQ3K reports whether Pack repacks Q3_K matrices.
func packsQ3K() bool { return packsKQuant(gguf.Q3_K) && packGroup == packGroupKAVX2 }

// packQ3KGroup writes group g of the Q3_K matrix m in the packed layout to
// dst.
func packQ3KGroup(dst []byte, m Matrix, g, group int) {
	rb, nb, gb := m.RowBytes(), m.Cols/QK_K, q3KPackBytes(group)
	sc, lo := 2*group, 18*group
	for b := range nb {
		o := dst[b*gb : (b+1)*gb]
		for i := range group {
			blk := m.Data[(g*group+i)*rb+b*BlockQ3_K:][:BlockQ3_K]
			binary.LittleEndian.PutUint16(o[2*i:], binary.LittleEndian.Uint16(blk[108:]))
			for s := range 16 {
				o[sc+2*group*(s/2)+2*i+s%2] = byte(q3KScale(blk, s))
				lo := o[lo+16*group*(s/2)+4*i:]
				for c := range 4 {
					for k := range 4 {
						v := byte(q3KValue(blk, 16*s+4*c+k) + 4)
						lo[4*group*c+k] |= v << (4 * uint(s%2))
					}
				}
			}
		}
	}
}
