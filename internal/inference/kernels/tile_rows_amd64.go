//go:build !purego

package kernels

// The one-token Q8_0 and Q4_0 kernels of tile_rows_amd64.s, which
// gen_tile_rows.py writes: the tileKernel contract of q8_0Tile1x1 and
// q4_0Tile1x1, and their bits, but four or eight weight rows per pass over
// the activation. The one-row kernels wait on one FMA chain per row and
// spend five instructions per block on its scale; here the rows' chains are
// independent, the rows share the activation loads, and one VCVTPH2PS and
// one VMULPS make all their scales. Rows past the last group of four take
// the one-row code, and an eight-row kernel does four to seven remaining
// rows as a group of four.
//
// The tile sets use four rows for Q8_0 and eight for Q4_0, which measured
// best side by side (BenchmarkTileRows, medians of interleaved rounds, ×
// the one-row kernel): Q8_0 1.34-1.37 (four) and 1.39-1.42 (eight)
// cache-resident but 1.25-1.30 and 1.16-1.19 streaming from DRAM, where a
// single-stream decode reads its weights; Q4_0 about 1.5 either way
// cache-resident, 1.35-1.37 and 1.43-1.46 from DRAM. Q4_0 matrices of at
// least eight rows go through q4_0Rows8 over their repacked copy instead
// (mulRowsQ4Rows8), rows in pairs: 2.47-2.50 the exact one-row kernel
// cache-resident and 2.12-2.39 from DRAM; the eight-row kernel measured
// 1.50-1.57 and 1.44-1.49, and rows8 one row at a time (the frame
// broadcasts of q4row) 1.96-1.98 and 1.79-2.08.

//go:generate python3 gen_tile_rows.py .

//go:noescape
func q8_0Tile4x1(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)

//go:noescape
func q8_0Tile8x1(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)

//go:noescape
func q4_0Tile4x1(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)

//go:noescape
func q4_0Tile8x1(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)

// q4_0Tile8x1Exact is q4_0Tile8x1 with q4_0Tile1x1Exact's arithmetic and
// bits (the VNNI tiles' one token).
//
//go:noescape
func q4_0Tile8x1Exact(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)

// q4_0Rows8 is q4_0Tile8x1 over `groups` groups of eight rows in the rows8
// layout (packQ4Rows8) at w, writing row r of the first group at out + 4·r:
// the same arithmetic per row, so the same bits.
//
//go:noescape
func q4_0Rows8(w *byte, x *int8, d *float32, c *float32, nb int, out *float32, groups int)
