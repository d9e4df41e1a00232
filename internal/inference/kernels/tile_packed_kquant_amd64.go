//go:build !purego

package kernels

import "partnerapi/internal/inference/gguf"

// The packed Q4_K and Q6_K kernels of tile_packed_q4_k_amd64.s and
// tile_packed_q6_k_amd64.s (packed_q4k.go and packed_q6k.go describe the
// layouts, gen_tile_packed_kquant.py the arithmetic). Each
// computes `groups` consecutive 16-row groups (contiguous in w) against a
// group of T tokens (the kTiles layout) over nb superblocks, writing token
// k's value of row r of the first group at out + 4·r + k·ostride bytes.

//go:generate python3 gen_tile_packed_kquant.py .
//go:generate python3 gen_tile_packed_kquant_avx2.py .

//go:noescape
func q4KPacked1(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4KPacked2(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4KPacked3(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4KPacked4(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4KPacked5(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4KPacked6(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4KPacked7(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4KPacked8(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4KPacked9(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4KPacked10(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q6KPacked1(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q6KPacked2(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q6KPacked3(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q6KPacked4(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q6KPacked5(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q6KPacked6(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q6KPacked7(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q6KPacked8(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q6KPacked9(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q6KPacked10(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5KPacked1(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5KPacked2(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5KPacked3(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5KPacked4(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5KPacked5(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5KPacked6(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5KPacked7(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5KPacked8(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5KPacked9(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5KPacked10(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

// The AVX2 Q4_K, Q5_K and Q6_K kernels of tile_packed_avx2_q4_k_amd64.s
// and tile_packed_avx2_q6_k_amd64.s, over 8-row groups, for up to kTokensAVX2
// tokens.

//go:noescape
func q4KPacked8x1(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4KPacked8x2(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4KPacked8x3(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4KPacked8x4(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q6KPacked8x1(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q6KPacked8x2(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q6KPacked8x3(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q6KPacked8x4(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5KPacked8x1(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5KPacked8x2(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5KPacked8x3(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q5KPacked8x4(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

type kPackedKernel func(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

// q4KPackedKernels and q6KPackedKernels are the packed kernels of each
// type indexed by tokens.
var q6KPackedKernels = [maxTileTokens + 1]kPackedKernel{nil, q6KPacked1, q6KPacked2, q6KPacked3, q6KPacked4, q6KPacked5, q6KPacked6, q6KPacked7, q6KPacked8, q6KPacked9, q6KPacked10}
var q4KPacked8Kernels = [maxTileTokens + 1]kPackedKernel{nil, q4KPacked8x1, q4KPacked8x2, q4KPacked8x3, q4KPacked8x4}

// The AVX2 Q3_K kernels of tile_packed_avx2_q3_k_amd64.s (packed_q3k.go).

//go:noescape
func q3KPacked8x1(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q3KPacked8x2(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q3KPacked8x3(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q3KPacked8x4(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

// The AVX2 Q2_K kernels of tile_packed_avx2_q2_k_amd64.s (packed_q2k.go).

//go:noescape
func q2KPacked8x1(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q2KPacked8x2(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q2KPacked8x3(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q2KPacked8x4(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

var q2KPacked8Kernels = [maxTileTokens + 1]kPackedKernel{nil, q2KPacked8x1, q2KPacked8x2, q2KPacked8x3, q2KPacked8x4}
var q3KPacked8Kernels = [maxTileTokens + 1]kPackedKernel{nil, q3KPacked8x1, q3KPacked8x2, q3KPacked8x3, q3KPacked8x4}
var q6KPacked8Kernels = [maxTileTokens + 1]kPackedKernel{nil, q6KPacked8x1, q6KPacked8x2, q6KPacked8x3, q6KPacked8x4}
var q5KPacked8Kernels = [maxTileTokens + 1]kPackedKernel{nil, q5KPacked8x1, q5KPacked8x2, q5KPacked8x3, q5KPacked8x4}
var q5KPackedKernels = [maxTileTokens + 1]kPackedKernel{nil, q5KPacked1, q5KPacked2, q5KPacked3, q5KPacked4, q5KPacked5, q5KPacked6, q5KPacked7, q5KPacked8, q5KPacked9, q5KPacked10}
var q4KPackedKernels = [maxTileTokens + 1]kPackedKernel{nil, q4KPacked1, q4KPacked2, q4KPacked3, q4KPacked4, q4KPacked5, q4KPacked6, q4KPacked7, q4KPacked8, q4KPacked9, q4KPacked10}

func init() {
	if cpuAVX2 {
		packedKMulRows = mulRowsPackedKAsm
	}
}

// mulRowsPackedKAsm computes rows [lo, hi) of a packed Q4_K or Q6_K matrix:
// whole groups with the packed kernels, rows outside them (a split off a
// group boundary, the tail past the last group) with the row dots over
// acts. Up to maxTileTokens tokens are one call over all the groups, one
// pass over the weights; more tokens (prefill) take a group at a time
// through every token group, so its weights stay in cache while the
// tokens stream past.
func mulRowsPackedKAsm(dst []float32, w Matrix, p *kTiles, acts []activation, lo, hi int) {
	group := w.packedGroup
	g0, g1, ok := wholeGroups(lo, hi, w.Rows, group, func(lo, hi int) { mulRows(dst, w, acts, lo, hi) })
	if !ok {
		return
	}
	nb, cols, n, rows := p.nb, p.cols, p.n, w.Rows
	ks, per := &q4KPackedKernels, 4 // sum words per (token, superblock)
	switch {
	case group == packGroupKAVX2 && w.Type == gguf.Q6_K:
		ks, per = &q6KPacked8Kernels, 8
	case group == packGroupKAVX2 && w.Type == gguf.Q3_K:
		ks, per = &q3KPacked8Kernels, 8
	case group == packGroupKAVX2 && w.Type == gguf.Q2_K:
		ks, per = &q2KPacked8Kernels, 8
	case group == packGroupKAVX2 && w.Type == gguf.Q5_K:
		ks = &q5KPacked8Kernels
	case group == packGroupKAVX2:
		ks = &q4KPacked8Kernels
	case w.Type == gguf.Q6_K:
		ks, per = &q6KPackedKernels, 8
	case w.Type == gguf.Q5_K:
		ks = &q5KPackedKernels
	}
	most := kTokens(group)
	bs := p.sums(w.Type)
	gb := nb * packBlockBytes(w.Type, group)
	_ = w.packed[g1*gb-1]
	_ = dst[(n-1)*rows+g1*group-1]
	_ = p.qs[n*cols-1]
	_ = p.d[n*nb-1]
	_ = bs[per*n*nb-1]
	if n <= most {
		ks[n](&w.packed[g0*gb], &p.qs[0], &p.d[0], &bs[0], nb, &dst[g0*group], 4*rows, g1-g0)
		return
	}
	// More tokens than a kernel takes (prefill, and on AVX2 a decode step
	// of five to ten streams): the token groups pass over a chunk of
	// groups at a time, small enough to stay in the L2 while they do. A
	// call per group instead cost ten-token AVX2 products up to a quarter of
	// their speed where a row holds only a few superblocks
	// (BenchmarkKChunkSideBySide on Zen 3: 16 KB chunks 0.99–1.19×, 64 KB
	// 1.05–1.20×, 256 KB 1.04–1.36× the call per group).
	step := max(1, kChunkBytes/gb)
	for g := g0; g < g1; g += step {
		gs := min(step, g1-g)
		tokenGroups(n, most, func(t0, nt int) {
			ks[nt](&w.packed[g*gb], &p.qs[t0*cols], &p.d[t0*nb], &bs[per*t0*nb], nb, &dst[t0*rows+g*group], 4*rows, gs)
		})
	}
}

// kChunkBytes is the packed weight bytes mulRowsPackedKAsm's token groups
// pass over together when a product has more tokens than its kernels take.
var kChunkBytes = 256 << 10
