//go:build !purego

package kernels

// The packed Q4_K kernels of tile_packed_q4_k_amd64.s (packed_q4k.go
// describes the layout, gen_tile_packed_q4k.py the arithmetic). Each
// computes `groups` consecutive 16-row groups (contiguous in w) against a
// group of T tokens (the kTiles layout) over nb superblocks, writing token
// k's value of row r of the first group at out + 4·r + k·ostride bytes.

//go:generate python3 gen_tile_packed_q4k.py .

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

type q4KPackedKernel func(w *byte, x *int8, d *float32, bs *int32, nb int, out *float32, ostride int, groups int)

// q4KPackedKernels are the packed Q4_K kernels indexed by tokens.
var q4KPackedKernels = [maxTileTokens + 1]q4KPackedKernel{nil, q4KPacked1, q4KPacked2, q4KPacked3, q4KPacked4, q4KPacked5, q4KPacked6, q4KPacked7, q4KPacked8, q4KPacked9, q4KPacked10}

func init() {
	if cpuVNNI {
		packedQ4KMulRows = mulRowsPackedQ4KAsm
	}
}

// mulRowsPackedQ4KAsm computes rows [lo, hi) of a packed Q4_K matrix:
// whole groups with the packed kernels, rows outside them (a split off a
// group boundary, the tail past the last group) with the row dots over
// acts. Up to maxTileTokens tokens are one call over all the groups, one
// pass over the weights; more tokens (prefill) take a group at a time
// through every token group, so its weights stay in cache while the
// tokens stream past.
func mulRowsPackedQ4KAsm(dst []float32, w Matrix, p *kTiles, acts []activation, lo, hi int) {
	group := w.packedGroup
	g0 := (lo + group - 1) / group
	g1 := min(hi, w.Rows) / group
	if g0 >= g1 {
		mulRows(dst, w, acts, lo, hi)
		return
	}
	if lo < g0*group {
		mulRows(dst, w, acts, lo, g0*group)
	}
	if hi > g1*group {
		mulRows(dst, w, acts, g1*group, hi)
	}
	nb, cols, n, rows := p.nb, p.cols, p.n, w.Rows
	gb := nb * q4KPackBytes(group)
	_ = w.packed[g1*gb-1]
	_ = dst[(n-1)*rows+g1*group-1]
	_ = p.qs[n*cols-1]
	_ = p.d[n*nb-1]
	_ = p.bs[4*n*nb-1]
	if n <= maxTileTokens {
		q4KPackedKernels[n](&w.packed[g0*gb], &p.qs[0], &p.d[0], &p.bs[0], nb, &dst[g0*group], 4*rows, g1-g0)
		return
	}
	for g := g0; g < g1; g++ {
		tileGroups(n, func(t0, nt int) {
			q4KPackedKernels[nt](&w.packed[g*gb], &p.qs[t0*cols], &p.d[t0*nb], &p.bs[4*t0*nb], nb, &dst[t0*rows+g*group], 4*rows, 1)
		})
	}
}
