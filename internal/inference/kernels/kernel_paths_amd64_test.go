//go:build !purego

package kernels

// tilePaths lists the ways this machine can run the Q8_0 and Q4_0
// products, whatever PARTNERAPI_KERNELS chose at start-up: the VNNI tiles,
// the AVX2 tiles and the per-token row dots. A path the CPU lacks carries
// the reason it is skipped.
func tilePaths() []tilePath {
	tiles := func(biased bool) func() func() {
		return func() func() {
			tiled, bias := tiledMulRows, tileBiased
			tiledMulRows, tileBiased = mulRowsTiledAsm, biased
			return func() { tiledMulRows, tileBiased = tiled, bias }
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
