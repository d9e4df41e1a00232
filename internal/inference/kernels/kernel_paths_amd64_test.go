//go:build !purego

package kernels

import (
	"testing"

	"golang.org/x/sys/cpu"
)

// tilePaths lists the ways this machine can run the quantised products,
// whatever PARTNERAPI_KERNELS chose at start-up: the AVX-512 family with
// packed Q8_0 and Q4_0 weights (where the test packs them), the VNNI
// kernels (Q8_0 and Q4_0 one-row tiles, Q4_K and Q6_K blocks), the AVX2
// family with its 8-row packed weights, the AVX2 one-row tiles and the
// per-token row dots. A path the CPU lacks carries the reason it is
// skipped.
func tilePaths() []tilePath {
	tiles := func(vnni, packed bool) func() func() {
		return func() func() {
			tiled, bias, kq, pk, pm, pg, pf := tiledMulRows, tileBiased, kquantVNNI, tilePacked, packedMulRows, packGroup, packFlip
			tiledMulRows, tileBiased, kquantVNNI, tilePacked, packedMulRows = mulRowsTiledAsm, vnni, vnni, packed, mulRowsPackedAsm
			packGroup, packFlip = packGroupAVX2, 0
			if vnni {
				packGroup, packFlip = packGroupVNNI, packFlipVNNI
			}
			return func() {
				tiledMulRows, tileBiased, kquantVNNI, tilePacked, packedMulRows, packGroup, packFlip = tiled, bias, kq, pk, pm, pg, pf
			}
		}
	}
	packed := tilePath{name: "avx512-packed", use: tiles(true, true)}
	vnni := tilePath{name: "avx512-vnni", use: tiles(true, false)}
	avx2Packed, avx2 := tilePath{name: "avx2-packed", use: tiles(false, true)}, tilePath{name: "avx2", use: tiles(false, false)}
	if !cpuVNNI {
		packed.skip = "this CPU has no AVX-512 VNNI with VL"
		vnni.skip = packed.skip
	}
	if !cpuAVX2 {
		const why = "this CPU has no AVX2 and FMA"
		avx2.skip, avx2Packed.skip, vnni.skip, packed.skip = why, why, why, why
	}
	return []tilePath{packed, vnni, avx2Packed, avx2, rowDotsPath()}
}

// attnPaths lists the ways this machine can run grouped attention over the
// half-precision cache, whatever PARTNERAPI_KERNELS chose: the AVX-512
// scores and weighted sums, the AVX2 kernels and the Go ones.
func attnPaths() []attnPath {
	vector := func(wide bool) func() func() {
		return func() func() {
			scores, sums, w := attnScoresGroupVec, attnWeightedSumGroupVec, attnWideSums
			attnScoresGroupVec, attnWeightedSumGroupVec, attnWideSums = attnScoresGroupAsm, attnWeightedSumGroupAsm, wide
			return func() { attnScoresGroupVec, attnWeightedSumGroupVec, attnWideSums = scores, sums, w }
		}
	}
	wide, narrow := attnPath{name: "avx512", use: vector(true)}, attnPath{name: "avx2", use: vector(false)}
	if !cpuVNNI {
		wide.skip = "this CPU has no AVX-512 VNNI with VL"
	}
	if !cpuAVX2 || !cpu.X86.HasF16C {
		wide.skip, narrow.skip = "this CPU has no AVX2, FMA and F16C", "this CPU has no AVX2, FMA and F16C"
	}
	return []attnPath{wide, narrow, goAttnPath()}
}

// q8Paths lists the ways this machine can run attention over the int8
// cache, whatever PARTNERAPI_KERNELS chose: the AVX-512 kernels, the AVX2
// ones and the Go ones (rows stored by each family's conversion).
func q8Paths() []attnPath {
	vector := func(wide bool) func() func() {
		return func() func() {
			restore := q8GoPath().use() // saves the chosen family's functions
			sc, sm := q8Scores, q8Sums
			useQ8Kernels(wide)
			return func() { restore(); q8Scores, q8Sums = sc, sm }
		}
	}
	wide, narrow := attnPath{name: "avx512", use: vector(true)}, attnPath{name: "avx2", use: vector(false)}
	if !cpuVNNI {
		wide.skip = "this CPU has no AVX-512 VNNI with VL"
	}
	if !cpuAVX2 {
		wide.skip, narrow.skip = "this CPU has no AVX2 and FMA", "this CPU has no AVX2 and FMA"
	}
	return []attnPath{wide, narrow, q8GoPath()}
}

// TestChooseKernels checks how PARTNERAPI_KERNELS and the CPU's features
// pick the kernel families.
// softmaxKernels lists the softmax implementations, whatever
// PARTNERAPI_KERNELS chose: Go, AVX2 and AVX-512, those this CPU lacks with
// the reason they are skipped.
func softmaxKernels() []softmaxKernel {
	ks := []softmaxKernel{{"go", softmaxGo, ""}, {"avx2", softmaxAsm, ""}, {"avx512", softmax512, ""}}
	if !cpuAVX2 {
		ks[1].skip = "this CPU has no AVX2 and FMA"
	}
	if !cpuVNNI {
		ks[2].skip = "this CPU has no AVX-512 (VNNI family)"
	}
	return ks
}

func TestChooseKernels(t *testing.T) {
	for _, c := range []struct {
		choice           string
		cpuAVX2, cpuVNNI bool
		avx2, vnni       bool
	}{
		{"", true, true, true, true},
		{"avx512", true, true, true, true},
		{"avx2", true, true, true, false},
		{"purego", true, true, false, false},
		{"avx512", true, false, true, false},
		{"", false, false, false, false},
		{"avx2", false, false, false, false},
		{"sse", true, true, true, true},
	} {
		avx2, vnni := chooseKernels(c.choice, c.cpuAVX2, c.cpuVNNI)
		if avx2 != c.avx2 || vnni != c.vnni {
			t.Errorf("%q on a CPU with AVX2 %v, VNNI %v: AVX2 %v, VNNI %v; want %v, %v", c.choice, c.cpuAVX2, c.cpuVNNI, avx2, vnni, c.avx2, c.vnni)
		}
	}
}
