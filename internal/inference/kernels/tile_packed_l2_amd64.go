//go:build !purego

package kernels

import "os"

// Where the Q8_0 packed kernels prefetch their weight stream. They read
// one weight stream per core and prefetch it eight blocks (4 352 bytes)
// ahead, because the hardware prefetchers alone do not run far enough
// ahead of it. Into the L1 (PREFETCHT0) suits Zen 5: a 135M-class step's
// Q8_0 weights streamed at 23 GB/s without it and 32 GB/s with it. On Zen 4
// (AMD family 19h, whose AVX-512 parts are all Zen 4) the same prefetches
// into the L1 cost more than they bring: measured side by side in one
// process (BenchmarkWeightPrefetchL2SideBySide135M), decoding without any
// software prefetch was 1.08–1.10× faster for one stream and 1.10–1.18×
// for two and four, but 0.91–0.94× for ten (whose kernels compute longer
// per byte and need the stream ahead of them), while prefetching into the
// L2 only (PREFETCHT1, same distance) was faster for every stream count:
// 1.05–1.11× one stream, 1.08–1.21× four, 1.10–1.16× ten (the 0.5B shape:
// 1.05× one stream, 1.18–1.24× ten), with prefill unchanged (0.99–1.01×).
// At 2 176 or 8 704 bytes ahead it was no better. Q4_0 kernels measured
// 0.94–0.99× with PREFETCHT1 and 0.89–1.01× without prefetch there, and
// keep PREFETCHT0 everywhere.
//
// WeightPrefetchEnv overrides the choice ("l1" or "l2"), for comparing
// the two on another CPU with `partnerapi bench engine`.
const WeightPrefetchEnv = "PARTNERAPI_WEIGHT_PREFETCH"

// q8_0PackedL2Kernels are the Q8_0 packed kernels prefetching into the L2
// (tile_packed_q8_0_l2_amd64.s, generated with the others).
var q8_0PackedL2Kernels = packedSet{nil, q8_0PackedL2x1, q8_0PackedL2x2, q8_0PackedL2x3, q8_0PackedL2x4, q8_0PackedL2x5, q8_0PackedL2x6, q8_0PackedL2x7, q8_0PackedL2x8, q8_0PackedL2x9, q8_0PackedL2x10}

// prefetchL2 reports whether the Q8_0 packed kernels prefetch into the L2
// (set once at start-up; SetWeightPrefetchL2 switches it for benchmarks).
var prefetchL2 = choosePrefetchL2(os.Getenv(WeightPrefetchEnv), amdFamily())

// choosePrefetchL2 picks the prefetch target from the environment's
// choice and the CPU's AMD family (0 for other vendors).
func choosePrefetchL2(choice string, family uint32) bool {
	switch choice {
	case "l1":
		return false
	case "l2":
		return true
	}
	return family == 0x19
}

// SetWeightPrefetchL2 makes the Q8_0 packed kernels prefetch into the L2
// (on) or the L1 (off), for benchmarks that compare the two in one
// process. It must not be called while products run.
func SetWeightPrefetchL2(on bool) { prefetchL2 = on }

// WeightPrefetch names where the Q8_0 packed kernels in use prefetch: "L2"
// or "L1" ("none" where PARTNERAPI_KERNELS=purego leaves them out). Only the
// AVX-512 family has the L2 set; the AVX2 kernels always prefetch into the
// L1.
func WeightPrefetch() string {
	switch {
	case !hasAVX2:
		return "none"
	case prefetchL2 && hasVNNI:
		return "L2"
	}
	return "L1"
}

// amdFamily returns the CPU's family (base plus extended, as AMD numbers
// them: 19h for Zen 3 and Zen 4, 1Ah for Zen 5) on AMD CPUs, 0 on others.
func amdFamily() uint32 {
	_, b, c, d := cpuid(0, 0)
	if b != 0x68747541 || d != 0x69746e65 || c != 0x444d4163 { // "AuthenticAMD"
		return 0
	}
	a, _, _, _ := cpuid(1, 0)
	family := a >> 8 & 0xf
	if family == 0xf {
		family += a >> 20 & 0xff
	}
	return family
}

//go:noescape
func cpuid(leaf, sub uint32) (a, b, c, d uint32)

//go:noescape
func q8_0PackedL2x1(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q8_0PackedL2x2(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q8_0PackedL2x3(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q8_0PackedL2x4(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q8_0PackedL2x5(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q8_0PackedL2x6(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q8_0PackedL2x7(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q8_0PackedL2x8(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q8_0PackedL2x9(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q8_0PackedL2x10(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)
