//go:build !purego

package kernels

import (
	"unsafe"

	"partnerapi/internal/inference/gguf"
)

// The packed Q8_0 and Q4_0 kernels (packed.go describes the layout): the
// AVX-512 VNNI ones of tile_packed_q8_0_amd64.s and
// tile_packed_q4_0_amd64.s (tile_packed_gfni_amd64.go where the CPU has
// GFNI) over 16-row groups, and the AVX2 ones below
// over 8-row groups. Each computes `groups` consecutive groups (contiguous
// in w) against a group of T tokens (the q8Tiles layout, unbiased, with
// the corrections c laid out like d) over nb blocks, writing token k's
// value of row r of the first group at out + 4·r + k·ostride bytes.

//go:generate python3 gen_tile_packed.py .

//go:noescape
func q8_0Packed1(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q8_0Packed2(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q8_0Packed3(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q8_0Packed4(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q8_0Packed5(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q8_0Packed6(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q8_0Packed7(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q8_0Packed8(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q8_0Packed9(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q8_0Packed10(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0Packed1(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0Packed2(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0Packed3(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0Packed4(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0Packed5(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0Packed6(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0Packed7(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0Packed8(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0Packed9(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0Packed10(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

// The Q5_0 kernels of tile_packed_q5_0_amd64.s (packed_q5_0.go), the
// Q4_0 ones with each value's fifth bit ORed in from a bit plane.

//go:noescape
func q5_0Packed1(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5_0Packed2(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5_0Packed3(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5_0Packed4(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5_0Packed5(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5_0Packed6(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5_0Packed7(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5_0Packed8(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5_0Packed9(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5_0Packed10(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

// The Q5_1 kernels of tile_packed_q5_1_amd64.s (q5_1.go), which read
// their c as floats: each block's d_x·Σx (q8Tiles.ms).

//go:noescape
func q5_1Packed1(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5_1Packed2(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5_1Packed3(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5_1Packed4(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5_1Packed5(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5_1Packed6(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5_1Packed7(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5_1Packed8(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5_1Packed9(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5_1Packed10(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

// The AVX2 kernels of tile_packed_avx2_q8_0_amd64.s and
// tile_packed_avx2_q4_0_amd64.s, over 8-row groups (ymm lanes); the Q8_0
// ones take their weights signed and ignore c.

//go:generate python3 gen_tile_packed_avx2.py .

//go:noescape
func q8_0Packed8x1(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q8_0Packed8x2(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q8_0Packed8x3(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q8_0Packed8x4(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q8_0Packed8x5(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q8_0Packed8x6(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q8_0Packed8x7(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q8_0Packed8x8(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q8_0Packed8x9(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q8_0Packed8x10(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0Packed8x1(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0Packed8x2(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0Packed8x3(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0Packed8x4(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0Packed8x5(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0Packed8x6(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0Packed8x7(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0Packed8x8(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0Packed8x9(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0Packed8x10(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

// The AVX2 Q5_0 and Q5_1 kernels of tile_packed_avx2_q5_0_amd64.s and
// tile_packed_avx2_q5_1_amd64.s (gen_tile_packed_avx2.py), over 8-row groups.

//go:noescape
func q5_0Packed8x1(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5_0Packed8x2(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5_0Packed8x3(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5_0Packed8x4(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5_0Packed8x5(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5_0Packed8x6(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5_0Packed8x7(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5_0Packed8x8(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5_0Packed8x9(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5_0Packed8x10(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5_1Packed8x1(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5_1Packed8x2(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5_1Packed8x3(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5_1Packed8x4(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5_1Packed8x5(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5_1Packed8x6(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5_1Packed8x7(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5_1Packed8x8(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5_1Packed8x9(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5_1Packed8x10(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

// The AVX2 IQ4_NL kernels of tile_packed_avx2_iq4_nl_amd64.s (gen_tile_packed_avx2.py), over
// 8-row groups in the packed Q4_0 layout; they ignore c.

//go:noescape
func iq4_nlPacked8x1(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func iq4_nlPacked8x2(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func iq4_nlPacked8x3(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func iq4_nlPacked8x4(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func iq4_nlPacked8x5(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func iq4_nlPacked8x6(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func iq4_nlPacked8x7(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func iq4_nlPacked8x8(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func iq4_nlPacked8x9(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func iq4_nlPacked8x10(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

type packedKernel func(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

// packedSet holds one weight type's packed kernels indexed by tokens.
type packedSet [maxTileTokens + 1]packedKernel

var (
	q8_0PackedKernels = packedSet{nil, q8_0Packed1, q8_0Packed2, q8_0Packed3, q8_0Packed4, q8_0Packed5, q8_0Packed6, q8_0Packed7, q8_0Packed8, q8_0Packed9, q8_0Packed10}
	q5_1PackedKernels = packedSet{nil, q5_1Packed1, q5_1Packed2, q5_1Packed3, q5_1Packed4, q5_1Packed5, q5_1Packed6, q5_1Packed7, q5_1Packed8, q5_1Packed9, q5_1Packed10}
	q5_0PackedKernels = packedSet{nil, q5_0Packed1, q5_0Packed2, q5_0Packed3, q5_0Packed4, q5_0Packed5, q5_0Packed6, q5_0Packed7, q5_0Packed8, q5_0Packed9, q5_0Packed10}
	q4_0PackedKernels = packedSet{nil, q4_0Packed1, q4_0Packed2, q4_0Packed3, q4_0Packed4, q4_0Packed5, q4_0Packed6, q4_0Packed7, q4_0Packed8, q4_0Packed9, q4_0Packed10}

	q8_0Packed8Kernels  = packedSet{nil, q8_0Packed8x1, q8_0Packed8x2, q8_0Packed8x3, q8_0Packed8x4, q8_0Packed8x5, q8_0Packed8x6, q8_0Packed8x7, q8_0Packed8x8, q8_0Packed8x9, q8_0Packed8x10}
	q4_0Packed8Kernels  = packedSet{nil, q4_0Packed8x1, q4_0Packed8x2, q4_0Packed8x3, q4_0Packed8x4, q4_0Packed8x5, q4_0Packed8x6, q4_0Packed8x7, q4_0Packed8x8, q4_0Packed8x9, q4_0Packed8x10}
	q5_0Packed8Kernels  = packedSet{nil, q5_0Packed8x1, q5_0Packed8x2, q5_0Packed8x3, q5_0Packed8x4, q5_0Packed8x5, q5_0Packed8x6, q5_0Packed8x7, q5_0Packed8x8, q5_0Packed8x9, q5_0Packed8x10}
	iq4NLPacked8Kernels = packedSet{nil, iq4_nlPacked8x1, iq4_nlPacked8x2, iq4_nlPacked8x3, iq4_nlPacked8x4, iq4_nlPacked8x5, iq4_nlPacked8x6, iq4_nlPacked8x7, iq4_nlPacked8x8, iq4_nlPacked8x9, iq4_nlPacked8x10}
	q5_1Packed8Kernels  = packedSet{nil, q5_1Packed8x1, q5_1Packed8x2, q5_1Packed8x3, q5_1Packed8x4, q5_1Packed8x5, q5_1Packed8x6, q5_1Packed8x7, q5_1Packed8x8, q5_1Packed8x9, q5_1Packed8x10}
)

// The packed layouts of the two families: rows per group and the XOR of
// the Q8_0 weight words (packed.go).
const (
	packGroupVNNI = 16
	packFlipVNNI  = 0x80808080
	packGroupAVX2 = 8
)

// packedKernels returns the packed kernels for weights of type t packed
// in groups of `group` rows.
func packedKernels(t gguf.GGMLType, group int) *packedSet {
	switch {
	case group == packGroupAVX2 && t == gguf.Q4_0:
		return &q4_0Packed8Kernels
	case group == packGroupAVX2 && t == gguf.Q5_0:
		return &q5_0Packed8Kernels
	case group == packGroupAVX2 && t == gguf.Q5_1:
		return &q5_1Packed8Kernels
	case group == packGroupAVX2 && t == gguf.IQ4_NL:
		return &iq4NLPacked8Kernels
	case group == packGroupAVX2:
		return &q8_0Packed8Kernels
	case t == gguf.Q4_0 && packedGFNI:
		return &q4_0PackedGFNIKernels
	case t == gguf.Q4_0:
		return &q4_0PackedKernels
	case t == gguf.Q5_0:
		return &q5_0PackedKernels
	case t == gguf.Q5_1:
		return &q5_1PackedKernels
	case prefetchL2:
		return &q8_0PackedL2Kernels
	}
	return &q8_0PackedKernels
}

func init() {
	switch {
	case hasVNNI:
		tilePacked, packGroup, packFlip = true, packGroupVNNI, packFlipVNNI
	case hasAVX2:
		tilePacked, packGroup, packFlip = true, packGroupAVX2, 0
	}
	if tilePacked {
		packedMulRows = mulRowsPackedAsm
	}
	packsQ5 = tilePacked
}

// packPrefillGroupsAVX2 is how many 8-row groups a prefill pass of
// mulRowsPackedAsm covers per call of the AVX2 kernels: the rows of the
// unpacked tiles' pass (tileRowBlock), whose weights stay in cache while
// the token groups stream past. The VNNI family's groups go one at a time.
const packPrefillGroupsAVX2 = tileRowBlock / packGroupAVX2

// mulRowsPackedAsm computes rows [lo, hi) of a packed Q8_0 or Q4_0 matrix
// against the activations p (unbiased, with block sums). Whole groups go
// to the packed kernels, rows outside them (a split off a group boundary,
// the tail past the last group) to the one-row tiles. Up to maxTileTokens
// tokens are one call over all the groups, one pass over the weights;
// more tokens (prefill) take a group (AVX2: packPrefillGroupsAVX2 groups)
// at a time through every token group, so those weights stay in cache
// while the tokens stream past.
func mulRowsPackedAsm(dst []float32, w Matrix, p *q8Tiles, lo, hi int) {
	group := w.packedGroup
	g0, g1, ok := wholeGroups(lo, hi, w.Rows, group, func(lo, hi int) { mulRowsTiledAsm(dst, w, p, lo, hi) })
	if !ok {
		return
	}
	ks := packedKernels(w.Type, group)
	nb, cols, n, rows := p.nb, p.cols, p.n, w.Rows
	gb := nb * packBlockBytes(w.Type, group)
	_ = w.packed[g1*gb-1]
	_ = dst[(n-1)*rows+g1*group-1]
	_ = p.qs[n*cols-1]
	_ = p.d[n*nb-1]
	_ = p.c8[n*nb-1]
	_ = p.c4[n*nb-1]
	_ = p.c16[n*nb-1]
	c := p.c8
	switch w.Type {
	case gguf.Q4_0:
		c = p.c4
	case gguf.Q5_0:
		c = p.c16
	case gguf.Q5_1:
		_ = p.ms[n*nb-1]
		c = unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(p.ms))), len(p.ms))
	}
	if n <= maxTileTokens {
		ks[n](&w.packed[g0*gb], &p.qs[0], &p.d[0], &c[0], nb, &dst[g0*group], 4*rows, g1-g0)
		return
	}
	step := 1
	if group == packGroupAVX2 {
		step = packPrefillGroupsAVX2
	}
	for g := g0; g < g1; g += step {
		gs := min(step, g1-g)
		tileGroups(n, func(t0, nt int) {
			ks[nt](&w.packed[g*gb], &p.qs[t0*cols], &p.d[t0*nb], &c[t0*nb], nb, &dst[t0*rows+g*group], 4*rows, gs)
		})
	}
}
