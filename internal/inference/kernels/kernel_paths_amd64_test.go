//go:build !purego

package kernels

// tilePaths lists the ways this machine can run the quantised products,
// whatever PARTNERAPI_KERNELS chose at start-up: the VNNI kernels (Q8_0 and
// Q4_0 tiles, Q4_K and Q6_K blocks), the AVX2 ones and the per-token row
// dots. A path the CPU lacks carries the reason it is skipped.
func tilePaths() []tilePath {
	tiles := func(vnni bool) func() func() {
		return func() func() {
			tiled, bias, kq := tiledMulRows, tileBiased, kquantVNNI
			tiledMulRows, tileBiased, kquantVNNI = mulRowsTiledAsm, vnni, vnni
			return func() { tiledMulRows, tileBiased, kquantVNNI = tiled, bias, kq }
		}
	}
	vnni, avx2 := tilePath{name: "avx512-vnni", use: tiles(true)}, tilePath{name: "avx2", use: tiles(false)}
	if !cpuVNNI {
		vnni.skip = "this CPU has no AVX-512 VNNI with VL"
	}
	if !cpuAVX2 {
		avx2.skip, vnni.skip = "this CPU has no AVX2 and FMA", "this CPU has no AVX2 and FMA"
	}
	return []tilePath{vnni, avx2, rowDotsPath()}
}
