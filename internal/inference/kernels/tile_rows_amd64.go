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
// cache-resident, 1.35-1.37 and 1.43-1.46 from DRAM.
//
// Where the AVX2 family is in use, whole groups of eight rows of a Q8_0 or
// Q4_0 matrix take the packed kernels instead, for one token as for ten
// (packed.go): these serve only the rows past a matrix's last group, and
// the unpacked paths the tests compare. (A one-token Q4_0 kernel over a
// repacked copy of eight rows, q4_0Rows8, measured 2.47-2.50 the exact
// one-row kernel cache-resident and 2.12-2.39 from DRAM; the packed
// one-token kernel replaced it and its copy, BenchmarkTileRows packed8.)

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
