//go:build !purego

package kernels

import (
	"os"

	"golang.org/x/sys/cpu"
)

// The Q4_0 packed kernels of tile_packed_q4_0_gfni_amd64.s (written by
// gen_tile_packed.py): those of tile_packed_q4_0_amd64.s with each chunk's
// high nibbles taken out by one VGF2P8AFFINEQB instead of VPSRLW and
// VPANDD. The kernels are bound by the two ports that run 512-bit
// operations, so the four operations a block fewer are their gain; the
// bytes they feed VPDPBUSD are the same, so the results are the same bits
// (TestPackedQ4_0GFNIMatchesShift).

// packedGFNI reports whether the AVX-512 Q4_0 products take the GFNI
// kernels: where the VNNI family runs on an Intel CPU with GFNI (every
// AVX-512 VNNI one but Cascade Lake). There every 512-bit operation runs on
// the same two ports, so an operation fewer is a cycle's half fewer. AMD's
// Zen 4 and Zen 5 have GFNI too, but run VGF2P8AFFINEQB on the multiply
// pipes that VPDPBUSD and the float steps already fill, and the shift and
// the mask on others. Measured on a Zen 4 (EPYC, family 19h model 11h,
// 2026-11-30 08:15–08:30 UTC, two cores shared with other sessions at a
// load average of 8–15): BenchmarkPackedQ4_0GFNI (the two sets alternating
// from the L1, thread CPU, five runs) put the GFNI kernels at 0.95–0.96× the
// shift kernels' speed at six to ten tokens, 0.93 at five, 0.91 at four,
// 0.90 at three, 0.92–0.94 at two, and 1.17–1.18× at one;
// BenchmarkPackedQ4_0GFNIStep (a 135M step's Q4_0 products, 56 MB) 0.83–1.00×
// (median 0.90) at ten tokens and 1.02–1.44× (median 1.12) at one. Whole
// steps (`scripts/engine-ab.sh`, eight alternating rounds, 15M and 135M
// Q4_0, one and ten streams), GFNI for every token count and, separately,
// for the one-token kernel only: each build's decode moved by 2–8× between
// rounds under that load, so the medians (new ÷ old 0.50–2.33 and
// 0.66–1.03) showed nothing either way. Zen 4 therefore keeps the
// shift-and-mask kernels: slower at every token count a batched step uses,
// and not shown faster in a whole step at one. Zen 5 (EPYC, family 1Ah
// model 02h, 2026-11-30 11:24–11:27 UTC, quiet) is another matter from the
// L1: BenchmarkPackedQ4_0GFNI, three runs, 1.03–1.06× at seven to ten
// tokens, 1.07–1.10 at five and six, 1.10–1.15 at three and four, 1.19–1.23
// at two and 1.24–1.31 at one; but BenchmarkPackedQ4_0GFNIStep (from
// memory) 1.005–1.02× at ten and 0.99–1.02 at one, and whole steps
// (PARTNERAPI_Q4_0_UNPACK switched in one binary, six alternating rounds
// of `bench engine --shape 15m,135m --quant q4_0`, quiet) decode 1.00–1.06×
// and prefill 0.93–1.05× by the medians, each side moving up to 1.7×
// between rounds; ten more rounds under the helpers' load (10) moved each
// side 6–12× and said nothing, and ten quiet ones (12:52–12:54, load
// below 2) gave paired medians of one stream 1.00× (135M) and 1.03× (15M),
// ten streams 0.99×. So Zen 5 keeps the shift kernels too: the gain from
// the L1 does not reach a step, whose weights stream from memory or the
// L3. Tests switch it to compare the two sets.
var packedGFNI = chooseGFNI(os.Getenv(Q4_0UnpackEnv), hasVNNI && cpu.X86.HasAVX512GFNI, amdFamily())

// Q4_0UnpackEnv overrides the choice of the Q4_0 kernels ("gfni" or
// "shift"), for comparing the two on another CPU with `partnerapi bench
// engine`; a CPU without GFNI keeps the shift kernels whatever it says.
const Q4_0UnpackEnv = "PARTNERAPI_Q4_0_UNPACK"

// chooseGFNI picks the Q4_0 kernels from the environment's choice, whether
// the CPU can run the GFNI ones, and its AMD family (0 for other vendors).
func chooseGFNI(choice string, can bool, family uint32) bool {
	switch {
	case !can:
		return false
	case choice == "gfni":
		return true
	case choice == "shift":
		return false
	}
	return family == 0
}

// Q4_0Unpack names how the Q4_0 packed kernels in use take a chunk's high
// nibbles: "GFNI" (one VGF2P8AFFINEQB) or "shift" (VPSRLW and VPANDD), or
// "none" where the AVX-512 VNNI family is not in use.
func Q4_0Unpack() string {
	switch {
	case !hasVNNI:
		return "none"
	case packedGFNI:
		return "GFNI"
	}
	return "shift"
}

//go:noescape
func q4_0PackedGFNI1(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0PackedGFNI2(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0PackedGFNI3(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0PackedGFNI4(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0PackedGFNI5(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0PackedGFNI6(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0PackedGFNI7(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0PackedGFNI8(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0PackedGFNI9(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0PackedGFNI10(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

var q4_0PackedGFNIKernels = packedSet{nil, q4_0PackedGFNI1, q4_0PackedGFNI2, q4_0PackedGFNI3, q4_0PackedGFNI4, q4_0PackedGFNI5, q4_0PackedGFNI6, q4_0PackedGFNI7, q4_0PackedGFNI8, q4_0PackedGFNI9, q4_0PackedGFNI10}
