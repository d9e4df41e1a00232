//go:build !purego

package kernels

// The one-token Q8_0 and Q4_0 kernels of tile_rows_amd64.s, which
// gen_tile_rows.py writes: the tileKernel contract of q8_0Tile1x1 and
// q4_0Tile1x1 (and their bits), but four weight rows per pass over the
// activation, so that four independent accumulator chains hide the FMA
// latency the one-row kernels wait on, and the rows share the activation
// loads and the scale conversion. Rows past the last group of four take the
// one-row code.

//go:generate python3 gen_tile_rows.py .

//go:noescape
func q8_0Tile4x1(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)

//go:noescape
func q4_0Tile4x1(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
