//go:build !purego

package kernels

import "partnerapi/internal/inference/gguf"

// The register-tiled Q8_0 and Q4_0 kernels of tile_amd64.s. Each computes
// the products of one or two weight rows (row 1 stride bytes after row 0)
// with one token (plain activation layout) or four (packed layout, see
// q8Tiles) over nb blocks, writing out[row*tokens + token]. c is the Q4_0
// offset correction array laid out like x (ignored by the Q8_0 kernels).

//go:noescape
func q8_0Tile2x4(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)

// q8_0Tile2x4NoPrefetch is q8_0Tile2x4 without its prefetches, kept so
// that a benchmark can measure what they buy side by side.
//
//go:noescape
func q8_0Tile2x4NoPrefetch(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)

//go:noescape
func q8_0Tile2x3(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)

//go:noescape
func q8_0Tile2x2(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)

//go:noescape
func q8_0Tile2x1(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)

//go:noescape
func q8_0Tile1x4(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)

//go:noescape
func q8_0Tile1x3(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)

//go:noescape
func q8_0Tile1x2(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)

//go:noescape
func q8_0Tile1x1(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)

//go:noescape
func q4_0Tile2x4(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)

//go:noescape
func q4_0Tile2x3(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)

//go:noescape
func q4_0Tile2x2(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)

//go:noescape
func q4_0Tile2x1(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)

//go:noescape
func q4_0Tile1x4(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)

//go:noescape
func q4_0Tile1x3(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)

//go:noescape
func q4_0Tile1x2(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)

//go:noescape
func q4_0Tile1x1(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)

type tileKernel func(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)

// tileSet holds one weight type's kernels by rows−1 and tokens.
type tileSet [2][5]tileKernel

var (
	q8_0Tiles = tileSet{
		{nil, q8_0Tile1x1, q8_0Tile1x2, q8_0Tile1x3, q8_0Tile1x4},
		{nil, q8_0Tile2x1, q8_0Tile2x2, q8_0Tile2x3, q8_0Tile2x4},
	}
	q4_0Tiles = tileSet{
		{nil, q4_0Tile1x1, q4_0Tile1x2, q4_0Tile1x3, q4_0Tile1x4},
		{nil, q4_0Tile2x1, q4_0Tile2x2, q4_0Tile2x3, q4_0Tile2x4},
	}
)

func init() {
	if hasAVX2 {
		tiledMulRows = mulRowsTiledAsm
	}
}

// tileRowBlock is how many rows the tiled product covers per pass over the
// token groups: their weights (about 20 KB of Q8_0 at 576 columns) stay in
// cache while every group streams past, and a group's activations stay in
// cache while the rows stream past.
const tileRowBlock = 32

// mulRowsTiledAsm computes rows [lo, hi) of a Q8_0 or Q4_0 matrix against
// the packed activations p: for each block of rows, one kernel call per
// group of up to four tokens walks the row pairs, so a weight block is
// expanded once per group and an activation block loaded once per two rows.
func mulRowsTiledAsm(dst []float32, w Matrix, p *q8Tiles, lo, hi int) {
	ks := &q8_0Tiles
	if w.Type == gguf.Q4_0 {
		ks = &q4_0Tiles
	}
	rb := w.RowBytes()
	nb, cols, n, rows := p.nb, p.cols, p.n, w.Rows
	if lo >= hi {
		return
	}
	_ = w.Data[hi*rb-1]
	_ = dst[(n-1)*rows+hi-1]
	_ = p.qs[n*cols-1]
	_ = p.d[n*nb-1+3] // a group's kernels load four scales at once
	_ = p.corr[n*cols/2-1]
	if n <= 4 {
		// One group (decode) is a memory-bound walk over the weights: one
		// row at a time keeps it a single sequential stream, which the
		// hardware prefetcher follows; two interleaved rows ran a 135M
		// decode step at 0.7× the speed.
		ks[0][n](&w.Data[lo*rb], rb, &p.qs[0], &p.d[0], &p.corr[0], nb, &dst[lo], 4*rows, hi-lo)
		return
	}
	block := tileRowBlock
	for r0 := lo; r0 < hi; r0 += block {
		r1 := min(r0+block, hi)
		pairs := (r1 - r0) / 2
		for t0 := 0; t0 < n; t0 += 4 {
			nt := min(4, n-t0)
			i := t0 * cols
			x, d, c := &p.qs[i], &p.d[t0*nb], &p.corr[i/2]
			if pairs > 0 {
				ks[1][nt](&w.Data[r0*rb], rb, x, d, c, nb, &dst[t0*rows+r0], 4*rows, pairs)
			}
			if r := r0 + 2*pairs; r < r1 {
				ks[0][nt](&w.Data[r*rb], rb, x, d, c, nb, &dst[t0*rows+r], 4*rows, 1)
			}
		}
	}
}
