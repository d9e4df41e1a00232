//go:build !purego

package kernels

import "golang.org/x/sys/cpu"

// hasF16C gates the half-precision KV kernels: they convert the cache with
// F16C's VCVTPH2PS and VCVTPS2PH on top of the AVX2 and FMA the other
// kernels use.
var hasF16C = hasAVX2 && cpu.X86.HasF16C

func init() {
	if !hasF16C {
		return
	}
	attnScoresGroupVec = attnScoresGroupAsm
	attnWeightedSumGroupVec = attnWeightedSumGroupAsm
	floatsToHalvesVec = floatsToHalvesAsm
}

// The assembly takes four query heads per pass over the cache. Each lane j
// has its own query (or weight) row and writes its result at byte offset
// o_j from out (o_0 = 0); a group whose size is not a multiple of four fills
// the spare lanes with its last head, which computes the same values and
// stores them to the same place again.

//go:noescape
func attnScoresF16x4AVX2(out *float32, o1, o2, o3 int, q0, q1, q2, q3 *float32, k *uint16, stride, hd, n int, scale float32)

//go:noescape
func attnWeightedSumF16x4AVX2(out *float32, o1, o2, o3 int, w0, w1, w2, w3 *float32, v *uint16, stride, hd, n int)

//go:noescape
func floatsToHalvesF16C(dst *uint16, src *float32, n int)

// groupLanes returns the heads of the four lanes starting at head j0 of a
// group of g.
func groupLanes(j0, g int) [4]int {
	last := g - 1
	return [4]int{j0, min(j0+1, last), min(j0+2, last), min(j0+3, last)}
}

func attnScoresGroupAsm(scores, q []float32, keys []uint16, hd, span, stride int, scale float32) {
	g := len(q) / hd
	for j0 := 0; j0 < g; j0 += 4 {
		l := groupLanes(j0, g)
		attnScoresF16x4AVX2(&scores[j0*span], (l[1]-j0)*span*4, (l[2]-j0)*span*4, (l[3]-j0)*span*4,
			&q[l[0]*hd], &q[l[1]*hd], &q[l[2]*hd], &q[l[3]*hd], &keys[0], stride, hd, span, scale)
	}
}

func attnWeightedSumGroupAsm(out, w []float32, values []uint16, hd, span, stride int) {
	g := len(out) / hd
	for j0 := 0; j0 < g; j0 += 4 {
		l := groupLanes(j0, g)
		attnWeightedSumF16x4AVX2(&out[j0*hd], (l[1]-j0)*hd*4, (l[2]-j0)*hd*4, (l[3]-j0)*hd*4,
			&w[l[0]*span], &w[l[1]*span], &w[l[2]*span], &w[l[3]*span], &values[0], stride, hd, span)
	}
}

func floatsToHalvesAsm(dst []uint16, src []float32) { floatsToHalvesF16C(&dst[0], &src[0], len(src)) }
