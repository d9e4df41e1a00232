//go:build !purego

package kernels

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// hasF16C gates the half-precision KV kernels: they convert the cache with
// F16C's VCVTPH2PS and VCVTPS2PH on top of the AVX2 and FMA the other
// kernels use.
var hasF16C = hasAVX2 && cpu.X86.HasF16C

func init() {
	if !hasF16C {
		return
	}
	attnWideSums = hasVNNI
	attnScoresGroupVec = attnScoresGroupAsm
	attnWeightedSumGroupVec = attnWeightedSumGroupAsm
	floatsToHalvesVec = floatsToHalvesAsm
}

// The assembly takes four or three query heads per pass over the cache.
// Each lane j has its own query (or weight) row and writes its result at
// byte offset o_j from out (o_0 = 0); a pass with fewer heads than lanes
// fills the spare lanes with its last head, which computes the same values
// and stores them to the same place again.

//go:noescape
func attnScoresF16x4AVX2(out *float32, o1, o2, o3 int, q0, q1, q2, q3 *float32, k *uint16, stride, hd, n int, scale float32, vdelta int)

//go:noescape
func attnScoresF16x3AVX2(out *float32, o1, o2 int, q0, q1, q2 *float32, k *uint16, stride, hd, n int, scale float32, vdelta int)

//go:noescape
func attnScoresF16x1AVX2(out *float32, q *float32, k *uint16, stride, hd, n int, scale float32, vdelta int)

//go:noescape
func attnWeightedSumF16x1AVX2(out *float32, w *float32, v *uint16, stride, hd, n int)

//go:noescape
func attnWeightedSumF16x4AVX2(out *float32, o1, o2, o3 int, w0, w1, w2, w3 *float32, v *uint16, stride, hd, n int)

//go:noescape
func attnWeightedSumF16x3AVX2(out *float32, o1, o2 int, w0, w1, w2 *float32, v *uint16, stride, hd, n int)

// attnWideSums selects the AVX-512 weighted sums (attn_group512_amd64.s),
// bit-identical to the AVX2 ones, and the AVX-512 scores
// (attn_scores512_amd64.s) with the avx512 family: the CPUs the VNNI tiles
// run on have AVX-512F and VL for their zmm registers and masks.
var attnWideSums bool

//go:noescape
func attnWeightedSumF16x4AVX512(out *float32, o1, o2, o3 int, w0, w1, w2, w3 *float32, v *uint16, stride, hd, n int)

//go:noescape
func attnWeightedSumF16x3AVX512(out *float32, o1, o2 int, w0, w1, w2 *float32, v *uint16, stride, hd, n int)

//go:noescape
func attnWeightedSumF16x1AVX512(out *float32, w *float32, v *uint16, stride, hd, n int)

// The AVX-512 scores (attn_scores512_amd64.s), chosen with the wide weighted
// sums, take one, two or three heads per pass over blocks of eight
// positions. Their scores are not bit-identical to the AVX2 kernels' (the
// sums are reduced in another order), but a head's scores are the same in
// all three and for every position, so they keep decode batch-invariant.

//go:noescape
func attnScoresF16x3AVX512(out *float32, o1, o2 int, q0, q1, q2 *float32, k *uint16, stride, hd, n int, scale float32, vdelta int)

//go:noescape
func attnScoresF16x2AVX512(out *float32, o1 int, q0, q1 *float32, k *uint16, stride, hd, n int, scale float32, vdelta int)

//go:noescape
func attnScoresF16x1AVX512(out *float32, q *float32, k *uint16, stride, hd, n int, scale float32, vdelta int)

//go:noescape
func floatsToHalvesF16C(dst *uint16, src *float32, n int)

// groupPass returns how many lanes (four or three) the pass starting at
// head j0 of a group of g uses, and the head of each lane. Passes of four
// are taken while they leave a remainder that passes of three cover with
// no more spare lanes (g = 7 is 4 + 3, g = 6 is 3 + 3, g = 5 is 3 + 3 with
// one spare).
func groupPass(j0, g int) (int, [4]int) {
	last := g - 1
	lanes := [4]int{j0, min(j0+1, last), min(j0+2, last), min(j0+3, last)}
	if rem := g - j0; rem >= 4 && (rem%4 == 0 || rem > 6) {
		return 4, lanes
	}
	return 3, lanes
}

func attnScoresGroupAsm(scores, q []float32, keys, values []uint16, hd, span, stride int, scale float32) {
	g := len(q) / hd
	// The kernels prefetch the value rows at this distance from the key
	// rows; it is only an address for PREFETCHT0, never dereferenced.
	vdelta := int(uintptr(unsafe.Pointer(&values[0])) - uintptr(unsafe.Pointer(&keys[0])))
	if attnWideSums {
		attnScoresGroupWide(scores, q, keys, hd, span, stride, scale, vdelta)
		return
	}
	if g == 1 {
		// A group of one head (multi-head attention) takes four positions
		// per pass rather than three lanes of the same head.
		attnScoresF16x1AVX2(&scores[0], &q[0], &keys[0], stride, hd, span, scale, vdelta)
		return
	}
	for j0 := 0; j0 < g; {
		n, l := groupPass(j0, g)
		if n == 4 {
			attnScoresF16x4AVX2(&scores[j0*span], (l[1]-j0)*span*4, (l[2]-j0)*span*4, (l[3]-j0)*span*4,
				&q[l[0]*hd], &q[l[1]*hd], &q[l[2]*hd], &q[l[3]*hd], &keys[0], stride, hd, span, scale, vdelta)
		} else {
			attnScoresF16x3AVX2(&scores[j0*span], (l[1]-j0)*span*4, (l[2]-j0)*span*4,
				&q[l[0]*hd], &q[l[1]*hd], &q[l[2]*hd], &keys[0], stride, hd, span, scale, vdelta)
		}
		j0 += n
	}
}

// attnScoresGroupWide runs the AVX-512 scores in passes of three heads,
// ending with a pass of two (or two of two instead of three and one, which
// would convert the keys for a single head), so no lane repeats a head.
// Four-head passes would need 32 accumulators for a block of eight
// positions, more registers than there are next to the rows and queries.
func attnScoresGroupWide(scores, q []float32, keys []uint16, hd, span, stride int, scale float32, vdelta int) {
	g := len(q) / hd
	if g == 1 {
		attnScoresF16x1AVX512(&scores[0], &q[0], &keys[0], stride, hd, span, scale, vdelta)
		return
	}
	for j0 := 0; j0 < g; {
		if rem := g - j0; rem == 2 || rem == 4 {
			attnScoresF16x2AVX512(&scores[j0*span], span*4, &q[j0*hd], &q[(j0+1)*hd], &keys[0], stride, hd, span, scale, vdelta)
			j0 += 2
			continue
		}
		attnScoresF16x3AVX512(&scores[j0*span], span*4, 2*span*4, &q[j0*hd], &q[(j0+1)*hd], &q[(j0+2)*hd], &keys[0], stride, hd, span, scale, vdelta)
		j0 += 3
	}
}

func attnWeightedSumGroupAsm(out, w []float32, values []uint16, hd, span, stride int) {
	g := len(out) / hd
	if g == 1 {
		// See attnScoresGroupAsm; bit-identical to both families. The
		// AVX-512 form walks the positions once for up to 64 values (the
		// AVX2 one twice for a head of 48).
		if attnWideSums {
			attnWeightedSumF16x1AVX512(&out[0], &w[0], &values[0], stride, hd, span)
		} else {
			attnWeightedSumF16x1AVX2(&out[0], &w[0], &values[0], stride, hd, span)
		}
		return
	}
	x4, x3 := attnWeightedSumF16x4AVX2, attnWeightedSumF16x3AVX2
	if attnWideSums {
		x4, x3 = attnWeightedSumF16x4AVX512, attnWeightedSumF16x3AVX512
	}
	for j0 := 0; j0 < g; {
		n, l := groupPass(j0, g)
		if n == 4 {
			x4(&out[j0*hd], (l[1]-j0)*hd*4, (l[2]-j0)*hd*4, (l[3]-j0)*hd*4,
				&w[l[0]*span], &w[l[1]*span], &w[l[2]*span], &w[l[3]*span], &values[0], stride, hd, span)
		} else {
			x3(&out[j0*hd], (l[1]-j0)*hd*4, (l[2]-j0)*hd*4,
				&w[l[0]*span], &w[l[1]*span], &w[l[2]*span], &values[0], stride, hd, span)
		}
		j0 += n
	}
}

func floatsToHalvesAsm(dst []uint16, src []float32) { floatsToHalvesF16C(&dst[0], &src[0], len(src)) }
