//go:build !purego

package kernels

import (
	"unsafe"

	"partnerapi/internal/inference/gguf"
)

// The register-tiled Q8_0 and Q4_0 kernels of tile_amd64.s. Each computes
// the products of one or two weight rows (row 1 stride bytes after row 0)
// with one token (plain activation layout) or four (packed layout, see
// q8Tiles) over nb blocks, writing out[row*tokens + token]. c is the Q4_0
// offset correction array laid out like x (ignored by the Q8_0 kernels).

//go:noescape
func q8_0Tile2x4(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *[8]float32)

//go:noescape
func q8_0Tile1x4(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *[8]float32)

//go:noescape
func q8_0Tile2x1(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *[8]float32)

//go:noescape
func q8_0Tile1x1(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *[8]float32)

//go:noescape
func q4_0Tile2x4(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *[8]float32)

//go:noescape
func q4_0Tile1x4(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *[8]float32)

//go:noescape
func q4_0Tile2x1(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *[8]float32)

//go:noescape
func q4_0Tile1x1(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *[8]float32)

type tileKernel func(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *[8]float32)

// tileSet is the four tile shapes of one weight type.
type tileSet struct{ r2t4, r1t4, r2t1, r1t1 tileKernel }

var (
	q8_0Tiles = tileSet{q8_0Tile2x4, q8_0Tile1x4, q8_0Tile2x1, q8_0Tile1x1}
	q4_0Tiles = tileSet{q4_0Tile2x4, q4_0Tile1x4, q4_0Tile2x1, q4_0Tile1x1}
)

func init() {
	if hasAVX2 {
		tiledMulRows = mulRowsTiledAsm
	}
}

// mulRowsTiledAsm computes rows [lo, hi) of a Q8_0 or Q4_0 matrix against
// the packed activations p: two rows at a time, each pair against every
// group of four tokens and then every remaining single token, so a weight
// block is expanded once per four tokens and an activation block is loaded
// once per two rows.
func mulRowsTiledAsm(dst []float32, w Matrix, p *q8Tiles, lo, hi int) {
	var ks tileSet
	switch w.Type {
	case gguf.Q8_0:
		ks = q8_0Tiles
	default:
		ks = q4_0Tiles
	}
	rb := w.RowBytes()
	nb, cols, n, groups := p.nb, p.cols, p.n, p.n/4
	_ = w.Data[hi*rb-1]
	_ = p.qs[n*cols-1]
	_ = p.d[n*nb-1]
	var c *int16
	if len(p.corr) > 0 {
		_ = p.corr[n*cols/2-1]
		c = &p.corr[0]
	}
	corrAt := func(i int) *int16 { // the correction block at x index i
		if c == nil {
			return nil
		}
		return (*int16)(unsafe.Add(unsafe.Pointer(c), i))
	}
	rows := w.Rows
	var out [8]float32
	r := lo
	for ; r+2 <= hi; r += 2 {
		wp := &w.Data[r*rb]
		for g := 0; g < groups; g++ {
			i := 4 * g * cols
			ks.r2t4(wp, rb, &p.qs[i], &p.d[4*g*nb], corrAt(i), nb, &out)
			for t := range 4 {
				dst[(4*g+t)*rows+r] = out[t]
				dst[(4*g+t)*rows+r+1] = out[4+t]
			}
		}
		for t := 4 * groups; t < n; t++ {
			i := t * cols
			ks.r2t1(wp, rb, &p.qs[i], &p.d[t*nb], corrAt(i), nb, &out)
			dst[t*rows+r] = out[0]
			dst[t*rows+r+1] = out[1]
		}
	}
	if r < hi {
		wp := &w.Data[r*rb]
		for g := 0; g < groups; g++ {
			i := 4 * g * cols
			ks.r1t4(wp, rb, &p.qs[i], &p.d[4*g*nb], corrAt(i), nb, &out)
			for t := range 4 {
				dst[(4*g+t)*rows+r] = out[t]
			}
		}
		for t := 4 * groups; t < n; t++ {
			i := t * cols
			ks.r1t1(wp, rb, &p.qs[i], &p.d[t*nb], corrAt(i), nb, &out)
			dst[t*rows+r] = out[0]
		}
	}
}
