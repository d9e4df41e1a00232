//go:build !purego

package kernels

import "partnerapi/internal/inference/gguf"

// The one-row Q8_0 and Q4_0 kernels of tile_q8_0_amd64.s and
// tile_q4_0_amd64.s (tile_amd64.h describes them). Each computes the
// products of `steps` consecutive weight rows (stride bytes apart) with a
// group of T tokens (packed layout, see q8Tiles) over nb blocks, writing
// token k's value of row r at out + 4·r + k·ostride bytes. c is the Q4_0
// offset corrections (q8Tiles.cq, laid out like d; ignored by the Q8_0
// kernels).

//go:noescape
func q8_0Tile1x1(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)

//go:noescape
func q8_0Tile1x2(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)

//go:noescape
func q8_0Tile1x3(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)

//go:noescape
func q8_0Tile1x4(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)

//go:noescape
func q8_0Tile1x5(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)

//go:noescape
func q8_0Tile1x6(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)

//go:noescape
func q8_0Tile1x7(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)

//go:noescape
func q8_0Tile1x8(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)

//go:noescape
func q8_0Tile1x9(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)

//go:noescape
func q8_0Tile1x10(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)

//go:noescape
func q4_0Tile1x1(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)

// q4_0Tile1x1Exact is q4_0Tile1x1 over the 8·x pair sums (q8Tiles.corr)
// instead: the offset comes off every block's integers, Σ (q−8)·x exactly,
// the arithmetic of the VNNI tiles, whose one-token twin it is.
//
//go:noescape
func q4_0Tile1x1Exact(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)

//go:noescape
func q4_0Tile1x2(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)

//go:noescape
func q4_0Tile1x3(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)

//go:noescape
func q4_0Tile1x4(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)

//go:noescape
func q4_0Tile1x5(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)

//go:noescape
func q4_0Tile1x6(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)

//go:noescape
func q4_0Tile1x7(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)

//go:noescape
func q4_0Tile1x8(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)

//go:noescape
func q4_0Tile1x9(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)

//go:noescape
func q4_0Tile1x10(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)

// The same kernels for AVX-512 VNNI (tile_vnni_amd64.h), over activations
// stored as x+128 (q8Tiles.biased), with results bit-identical to the AVX2
// ones for Q8_0 and to the Exact Q4_0 ones (q4_0Tile8x1Exact, which takes
// their one token); c is unused. There is none for one token (see
// q8Tiles.prepare).
// gen_tile_vnni.py writes their assembly.

//go:generate python3 gen_tile_vnni.py .

//go:noescape
func q8_0Tile1x2VNNI(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)

//go:noescape
func q8_0Tile1x3VNNI(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)

//go:noescape
func q8_0Tile1x4VNNI(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)

//go:noescape
func q8_0Tile1x5VNNI(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)

//go:noescape
func q8_0Tile1x6VNNI(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)

//go:noescape
func q8_0Tile1x7VNNI(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)

//go:noescape
func q8_0Tile1x8VNNI(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)

//go:noescape
func q8_0Tile1x9VNNI(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)

//go:noescape
func q8_0Tile1x10VNNI(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)

//go:noescape
func q4_0Tile1x2VNNI(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)

//go:noescape
func q4_0Tile1x3VNNI(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)

//go:noescape
func q4_0Tile1x4VNNI(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)

//go:noescape
func q4_0Tile1x5VNNI(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)

//go:noescape
func q4_0Tile1x6VNNI(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)

//go:noescape
func q4_0Tile1x7VNNI(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)

//go:noescape
func q4_0Tile1x8VNNI(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)

//go:noescape
func q4_0Tile1x9VNNI(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)

//go:noescape
func q4_0Tile1x10VNNI(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)

type tileKernel func(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)

// tileSet holds one weight type's kernels indexed by tokens. One token
// takes the multi-row kernels (tile_rows_amd64.go): the one-row kernels'
// bits, faster.
type tileSet [maxTileTokens + 1]tileKernel

var (
	q8_0Tiles = tileSet{nil, q8_0Tile4x1, q8_0Tile1x2, q8_0Tile1x3, q8_0Tile1x4, q8_0Tile1x5, q8_0Tile1x6, q8_0Tile1x7, q8_0Tile1x8, q8_0Tile1x9, q8_0Tile1x10}
	q4_0Tiles = tileSet{nil, q4_0Tile8x1, q4_0Tile1x2, q4_0Tile1x3, q4_0Tile1x4, q4_0Tile1x5, q4_0Tile1x6, q4_0Tile1x7, q4_0Tile1x8, q4_0Tile1x9, q4_0Tile1x10}

	q8_0TilesVNNI = tileSet{nil, nil, q8_0Tile1x2VNNI, q8_0Tile1x3VNNI, q8_0Tile1x4VNNI, q8_0Tile1x5VNNI, q8_0Tile1x6VNNI, q8_0Tile1x7VNNI, q8_0Tile1x8VNNI, q8_0Tile1x9VNNI, q8_0Tile1x10VNNI}
	q4_0TilesVNNI = tileSet{nil, nil, q4_0Tile1x2VNNI, q4_0Tile1x3VNNI, q4_0Tile1x4VNNI, q4_0Tile1x5VNNI, q4_0Tile1x6VNNI, q4_0Tile1x7VNNI, q4_0Tile1x8VNNI, q4_0Tile1x9VNNI, q4_0Tile1x10VNNI}
)

func init() {
	if hasAVX2 {
		tiledMulRows = mulRowsTiledAsm
		tileBiased = hasVNNI
	}
}

// tileKernels returns the tile kernels for weights of type t (Q8_0 or
// Q4_0) over activations with (biased) or without the x+128 bias.
func tileKernels(t gguf.GGMLType, biased bool) *tileSet {
	switch {
	case t == gguf.Q4_0 && biased:
		return &q4_0TilesVNNI
	case t == gguf.Q4_0:
		return &q4_0Tiles
	case biased:
		return &q8_0TilesVNNI
	}
	return &q8_0Tiles
}

// tileRowBlock is how many rows the tiled product covers per pass over the
// token groups when there is more than one: their weights (about 20 KB of
// Q8_0 at 576 columns) stay in cache while every group streams past, and a
// group's activations stay in cache while the rows stream past.
const tileRowBlock = 32

// mulRowsTiledAsm computes rows [lo, hi) of a Q8_0 or Q4_0 matrix against
// the packed activations p. Up to maxTileTokens tokens (a decode step) are
// one group: one kernel call walks the rows once, each weight block read
// from memory once and multiplied by every token. More tokens (prefill)
// walk blocks of rows, one call per group, so the block's weights are
// expanded once per group from cache. Activations prepared with the
// x+128 bias go to the VNNI kernels, the others to the AVX2 ones.
func mulRowsTiledAsm(dst []float32, w Matrix, p *q8Tiles, lo, hi int) {
	ks := tileKernels(w.Type, p.biased)
	rb := w.RowBytes()
	nb, cols, n, rows := p.nb, p.cols, p.n, w.Rows
	if lo >= hi {
		return
	}
	_ = w.Data[hi*rb-1]
	_ = dst[(n-1)*rows+hi-1]
	_ = p.qs[n*cols-1]
	_ = p.d[n*nb-1+tileScalePad] // the kernels load a group's scales eight at a time
	_ = p.cq[n*nb-1+tileScalePad]
	if n == 1 && w.Type == gguf.Q4_0 && tileBiased && !tilePacked {
		// The VNNI tiles' one token: their arithmetic, not the AVX2 tiles'.
		_ = p.corr[cols/2-1]
		q4_0Tile8x1Exact(&w.Data[lo*rb], rb, &p.qs[0], &p.d[0], &p.corr[0], nb, &dst[lo], 4*rows, hi-lo)
		return
	}
	if n <= maxTileTokens {
		ks[n](&w.Data[lo*rb], rb, &p.qs[0], &p.d[0], &p.cq[0], nb, &dst[lo], 4*rows, hi-lo)
		return
	}
	for r0 := lo; r0 < hi; r0 += tileRowBlock {
		r1 := min(r0+tileRowBlock, hi)
		tileGroups(n, func(t0, nt int) {
			i := t0 * cols
			ks[nt](&w.Data[r0*rb], rb, &p.qs[i], &p.d[t0*nb], &p.cq[t0*nb], nb, &dst[t0*rows+r0], 4*rows, r1-r0)
		})
	}
}
