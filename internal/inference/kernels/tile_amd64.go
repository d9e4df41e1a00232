//go:build !purego

package kernels

import "partnerapi/internal/inference/gguf"

// The register-tiled Q8_0 and Q4_0 kernels of tile_amd64.s. Each computes
// the products of one or two weight rows (row 1 stride bytes after row 0)
// with one token (plain activation layout) or four (packed layout, see
// q8Tiles) over nb blocks, writing out[row*tokens + token]. c is the Q4_0
// offset correction array laid out like x (ignored by the Q8_0 kernels).

//go:noescape
func q8_0Tile2x4(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *[8]float32)

//go:noescape
func q8_0Tile2x3(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *[8]float32)

//go:noescape
func q8_0Tile2x2(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *[8]float32)

//go:noescape
func q8_0Tile2x1(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *[8]float32)

//go:noescape
func q8_0Tile1x4(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *[8]float32)

//go:noescape
func q8_0Tile1x3(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *[8]float32)

//go:noescape
func q8_0Tile1x2(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *[8]float32)

//go:noescape
func q8_0Tile1x1(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *[8]float32)

//go:noescape
func q4_0Tile2x4(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *[8]float32)

//go:noescape
func q4_0Tile2x3(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *[8]float32)

//go:noescape
func q4_0Tile2x2(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *[8]float32)

//go:noescape
func q4_0Tile2x1(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *[8]float32)

//go:noescape
func q4_0Tile1x4(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *[8]float32)

//go:noescape
func q4_0Tile1x3(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *[8]float32)

//go:noescape
func q4_0Tile1x2(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *[8]float32)

//go:noescape
func q4_0Tile1x1(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *[8]float32)

type tileKernel func(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *[8]float32)

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

// mulRowsTiledAsm computes rows [lo, hi) of a Q8_0 or Q4_0 matrix against
// the packed activations p: two rows at a time, each pair against every
// group of up to four tokens, so a weight block is expanded once per group
// and an activation block is loaded once per two rows.
func mulRowsTiledAsm(dst []float32, w Matrix, p *q8Tiles, lo, hi int) {
	ks := &q8_0Tiles
	if w.Type == gguf.Q4_0 {
		ks = &q4_0Tiles
	}
	rb := w.RowBytes()
	nb, cols, n, rows := p.nb, p.cols, p.n, w.Rows
	_ = w.Data[hi*rb-1]
	_ = p.qs[n*cols-1]
	_ = p.d[n*nb-1+3] // a group's kernels load four scales at once
	_ = p.corr[n*cols/2-1]
	var out [8]float32
	for r := lo; r < hi; r += 2 {
		nr := min(2, hi-r)
		wp := &w.Data[r*rb]
		for t0 := 0; t0 < n; t0 += 4 {
			nt := min(4, n-t0)
			i := t0 * cols
			ks[nr-1][nt](wp, rb, &p.qs[i], &p.d[t0*nb], &p.corr[i/2], nb, &out)
			for k := range nt {
				dst[(t0+k)*rows+r] = out[k]
			}
			if nr == 2 {
				for k := range nt {
					dst[(t0+k)*rows+r+1] = out[nt+k]
				}
			}
		}
	}
}
