package kernels

import (
	"unsafe"

	"partnerapi/internal/inference/gguf"
)

// Repacked Q4_K weights for the AVX-512 VNNI family. Over the GGUF layout
// a Q4_K product ran at 9 multiply-adds per ns on a core for one token and
// no faster per token for four (the block kernels of kquant4_amd64.s unpack
// every block's scales and nibbles per row and sum lanes horizontally), a
// sixteenth of the packed Q4_0 kernels' rate: a Q4_K_M model's prefill was
// compute-bound at a few hundred tokens a second where its weights allow
// thousands, and even one token's product read its weights at a quarter of
// the memory bandwidth. Packed like Q8_0 and Q4_0 (packed.go), lanes are
// rows and one VPDPBUSD multiplies four values of sixteen rows.
//
// For group g of 16 rows and superblock b (256 values), at
// packed[(g·nb+b)·148·16:], with G = 16:
//
//   - [0, 2G): the rows' d (f16), [2G, 4G): their dmin (f16);
//   - [4G, 12G): the six-bit scales, sub-block j's of row i at 4G+G·j+i;
//   - [12G, 20G): the six-bit minimums in pairs, those of sub-blocks 2p
//     and 2p+1 of row i at 12G+2G·p+2i and +1 (VPMOVZXBW makes them the
//     int16 pair of lane i that VPDPWSSD multiplies by the token's pair of
//     32-value sums);
//   - [20G, 148G): the nibbles, sub-block j's 32 values of the 16 rows in
//     16G bytes: chunk c (4G bytes) holds row i's values 4c..4c+3 at 4i+k
//     in the low nibbles and 16+4c..16+4c+3 in the high ones, the Q4_0
//     packed block's layout.
//
// 148 bytes a row and superblock against GGUF's 144. The activations are
// Q8_K as the row dots take them (one scale per 256 values, the same
// quantisation), with each (token, superblock)'s four pairs of 32-value
// sums (kTiles). The kernels compute dotQ4KGo's integer sums exactly and
// its float steps in its order, so a row's result is its bits whatever
// the batch; rows past the last whole group keep the row dots.

// q4KPackBytes is the size of one (group, superblock) of packed Q4_K with
// groups of `group` rows.
func q4KPackBytes(group int) int { return 148 * group }

// packedKMulRows computes rows [lo, hi) of a packed Q4_K or Q6_K product
// from the prepared activations (k, and the row dots' acts for rows
// outside whole groups); nil where the packed K-quant kernels are not
// available (packing then leaves Q4_K and Q6_K matrices as they are).
var packedKMulRows func(dst []float32, w Matrix, k *kTiles, acts []activation, lo, hi int)

// packGroupK is the rows of a packed group of the AVX-512 family
// (packGroupVNNI), which has packed Q4_K, Q5_K, Q6_K and Q5_0 kernels; the AVX2
// family's 8-row groups have packed Q4_K, Q5_K and Q6_K kernels for up to
// kTokensAVX2 tokens a call.
const (
	packGroupK     = 16
	packGroupKAVX2 = 8
	kTokensAVX2    = 4
)

// packsKQuant reports whether Pack repacks matrices of the K-quant type t:
// where the kernel family in use has packed kernels for it.
func packsKQuant(t gguf.GGMLType) bool {
	if !tilePacked || packedKMulRows == nil {
		return false
	}
	return packGroup == packGroupK || packGroup == packGroupKAVX2
}

// packGroupFor is the rows of a packed group of type t in the kernel
// family in use: the family's own (packGroup) but for Q2_K under the
// AVX-512 family, which runs the AVX2 family's 8-row Q2_K kernels
// (packed_q2k.go).
func packGroupFor(t gguf.GGMLType) int {
	if t == gguf.Q2_K && packGroup == packGroupK {
		return packGroupKAVX2
	}
	return packGroup
}

// kTilesIndex is which of an activation buffer's two Q8_K layouts the
// packed K-quant kernels of groups of `group` rows read: 0 for the kernel
// family's own, 1 for the AVX2 kernels' groups of kTokensAVX2 tokens under
// the AVX-512 family (Q2_K).
func kTilesIndex(group int) int {
	if group == packGroupKAVX2 && packGroup != packGroupKAVX2 {
		return 1
	}
	return 0
}

// kTokens is the most tokens the packed K-quant kernels of groups of
// `group` rows take in one call (the token groups of kTiles).
func kTokens(group int) int {
	if group == packGroupKAVX2 {
		return kTokensAVX2
	}
	return maxTileTokens
}

// packedKQuant reports whether w's products go through packedKMulRows: the
// pool then splits them on w's group boundaries (rowUnit).
func packedKQuant(w Matrix) bool {
	return (w.Type == gguf.Q4_K || w.Type == gguf.Q5_K || w.Type == gguf.Q6_K || w.Type == gguf.Q3_K || w.Type == gguf.Q2_K) && w.packed != nil && packedKMulRows != nil &&
		tilePacked && w.packedGroup == packGroupFor(w.Type) && kquantPackedOn
}

// kquantPackedOn switches the packed K-quant kernels off for packed
// matrices, which then take the block kernels over their GGUF bytes.
var kquantPackedOn = true

// SetKQuantPacked makes the products of packed Q4_K and Q6_K matrices use
// the packed kernels (on) or the block kernels over the GGUF layout (off),
// for benchmarks that compare the two in one process. It must not be
// called while products run.
func SetKQuantPacked(on bool) { kquantPackedOn = on }

// packQ4KGroup writes group g of the Q4_K or Q5_K matrix m in the packed
// layout to dst: Q5_K adds, after the Q4_K layout's 148G bytes, a 4G-byte
// plane per sub-block j whose byte 4i+k holds at bit c the fifth bit of the
// value chunk byte 4i+k's operand c carries (operands 0–3 the low nibbles
// of chunks 0–3, 4–7 the high ones), 180 bytes a row and superblock against
// GGUF's 176.
func packQ4KGroup(dst []byte, m Matrix, g, group int) {
	five := m.Type == gguf.Q5_K
	bs := BlockQ4_K
	if five {
		bs = BlockQ5_K
	}
	rb, nb, gb := m.RowBytes(), m.Cols/QK_K, packBlockBytes(m.Type, group)
	sc, mn, qo, fo := 4*group, 12*group, 20*group, 148*group
	var q [QK_K]byte
	for b := range nb {
		o := dst[b*gb : (b+1)*gb]
		for i := range group {
			blk := m.Data[(g*group+i)*rb+b*bs:][:bs]
			o[2*i], o[2*i+1] = blk[0], blk[1]
			o[2*group+2*i], o[2*group+2*i+1] = blk[2], blk[3]
			if five {
				q5KValues(&q, blk)
			} else {
				q4KValues(&q, blk)
			}
			for j := range 8 {
				s, mv := q4KScaleMin(blk[4:16], j)
				o[sc+group*j+i] = s
				o[mn+2*group*(j/2)+2*i+j%2] = mv
				v := q[32*j:][:32]
				for c := range 4 {
					for k := range 4 {
						lo, hi := v[4*c+k], v[16+4*c+k]
						o[qo+16*group*j+4*group*c+4*i+k] = lo&0x0f | (hi&0x0f)<<4
						if five {
							o[fo+4*group*j+4*i+k] |= (lo>>4)<<uint(c) | (hi>>4)<<uint(4+c)
						}
					}
				}
			}
		}
	}
}

// q4KValues decodes the 256 values of a Q4_K block (0..15), in
// dequantisation order: sub-block j's are the low (j even) or high nibbles
// of qs[32·(j/2):][:32].
func q4KValues(q *[QK_K]byte, blk []byte) {
	qs := blk[16:144]
	for j := range 8 {
		shift := 4 * uint(j%2)
		ql := qs[32*(j/2):][:32]
		v := q[32*j:][:32]
		for l := range 32 {
			v[l] = ql[l] >> shift & 0x0f
		}
	}
}

// kTiles holds n activation vectors quantised to Q8_K (as activation
// quantises them for the K-quant row dots) in the layout of the packed
// K-quant kernels: tokens in groups of at most `most` (tokenGroups), each group
// superblock by superblock with its tokens' 256 values one after another
// (token k of a T-token group starting at t0 has superblock b at
// qs[t0·cols+256·(T·b+k)] and its scale at d[t0·nb+T·b+k]). The sums the
// kernels take, per (token, superblock) in the order of d: bs4 (Q4_K)
// four int32, the 32-value sums of sub-blocks 2p and 2p+1 as the low and
// high int16 of word p; bs6 (Q6_K) eight, the negated 16-value sums of
// sub-blocks 2p and 2p+1 likewise. Each is computed once per preparation,
// when a product of its type first asks (sums).
type kTiles struct {
	n, cols, nb       int
	most              int // tokens per group (kTokens)
	qs                []int8
	d                 []float32
	bs4, bs6          []int32
	hasBS4, hasBS6    bool
	tokStart, tokSize []int32 // each token's group (prepare)

	// The input of the prepare in progress, the word view of the values
	// while sums computes their sums, and the passes bound once as method
	// values: closures handed to the worker pool are allocated on every
	// call, and a decode step is to allocate nothing.
	x            []float32
	quantiseFn   func(lo, hi int)
	bs4Fn, bs6Fn func(lo, hi int)
	words        []uint64
}

// bind makes the method values the passes hand to the worker pool.
func (p *kTiles) bind() {
	if p.quantiseFn == nil {
		p.quantiseFn, p.bs4Fn, p.bs6Fn = p.quantiseRange, p.bs4Range, p.bs6Range
	}
}

// prepare quantises the n vectors of x to Q8_K in groups of at most most
// tokens, block by block within a group. Large inputs are split over the
// worker pool by token, as q8Tiles.prepareSplit does, with the same bits.
func (p *kTiles) prepare(x []float32, cols, n, most int) {
	nb := cols / QK_K
	p.n, p.cols, p.nb, p.most = n, cols, nb, most
	p.qs = grow(p.qs, n*cols)
	p.d = grow(p.d, n*nb)
	p.hasBS4, p.hasBS6 = false, false
	p.tokStart, p.tokSize = grow(p.tokStart, n), grow(p.tokSize, n)
	tokenGroups(n, most, func(t0, nt int) {
		for k := range nt {
			p.tokStart[t0+k], p.tokSize[t0+k] = int32(t0), int32(nt)
		}
	})
	p.bind()
	p.x = x
	defer func() { p.x = nil }()
	if n*cols < prepareParallelMin {
		p.quantiseRange(0, n)
		return
	}
	workers.parallel(n, n*cols, 0, p.quantiseFn)
}

// quantiseRange quantises tokens [lo, hi) of the prepare in progress.
func (p *kTiles) quantiseRange(lo, hi int) {
	cols, nb := p.cols, p.nb
	for t := lo; t < hi; t++ {
		t0, nt := int(p.tokStart[t]), int(p.tokSize[t])
		for b := range nb {
			i := t0*nb + nt*b + t - t0
			p.d[i] = quantizeQ8K(p.qs[i*QK_K:(i+1)*QK_K], p.x[t*cols+b*QK_K:][:QK_K])
		}
	}
}

// sums returns the sums the packed kernels of type t take (bs4 or bs6),
// computing them on first use (over the worker pool for large inputs). The
// products' workers call it concurrently once the sums exist (prepare made
// them), so it writes nothing then.
func (p *kTiles) sums(t gguf.GGMLType) []int32 {
	blocks := p.n * p.nb
	if t == gguf.Q4_K || t == gguf.Q5_K {
		if !p.hasBS4 {
			p.bs4 = grow(p.bs4, 4*blocks)
			p.bind()
			p.split(blocks, p.bs4Fn)
			p.hasBS4 = true
		}
		return p.bs4
	}
	if !p.hasBS6 {
		p.bs6 = grow(p.bs6, 8*blocks)
		p.bind()
		p.split(blocks, p.bs6Fn)
		p.hasBS6 = true
	}
	return p.bs6
}

// split runs fn over blocks [0, blocks) of the quantised values, over the
// worker pool for large inputs.
func (p *kTiles) split(blocks int, fn func(lo, hi int)) {
	p.words = unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(p.qs))), blocks*QK_K/8)
	defer func() { p.words = nil }()
	if p.n*p.cols < prepareParallelMin {
		fn(0, blocks)
		return
	}
	workers.parallel(blocks, p.n*p.cols, 0, fn)
}

// bs4Range writes the Q4_K/Q5_K sums of blocks [lo, hi).
func (p *kTiles) bs4Range(lo, hi int) {
	for i := lo; i < hi; i++ {
		w := p.words[32*i : 32*i+32]
		for j := range 4 {
			// |sum| ≤ 32·128, so each fits an int16.
			p.bs4[4*i+j] = int16Pair(blockSum(w[8*j:8*j+4]), blockSum(w[8*j+4:8*j+8]))
		}
	}
}

// bs6Range writes the other K-quants' sums of blocks [lo, hi).
func (p *kTiles) bs6Range(lo, hi int) {
	for i := lo; i < hi; i++ {
		w := p.words[32*i : 32*i+32]
		for j := range 8 {
			p.bs6[8*i+j] = int16Pair(-byteSum(w[4*j:4*j+2]), -byteSum(w[4*j+2:4*j+4]))
		}
	}
}

// int16Pair packs lo and hi, both within int16, as the low and high halves
// of one int32.
func int16Pair(lo, hi int32) int32 { return int32(uint32(uint16(int16(lo))) | uint32(hi)<<16) }
