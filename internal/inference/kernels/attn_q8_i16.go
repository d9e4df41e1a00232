package kernels

import "math"

// Scores over the row-major int8 key cache in integers, for the AVX2
// family. The float kernels sign-extend eight key bytes to int32, convert
// them to float32 and take one fused multiply-add per head: for three heads
// of 64 values, 8 extensions, 8 conversions and 24 multiply-adds a
// position, bound by the two FMA pipes. Here each head's query is rounded
// once per call to int16 with its own scale (absmax / 32767, 15 bits, 256
// times finer than the int8 key rows it meets), sixteen key bytes are
// sign-extended to int16 at a time (VPMOVSXBW) and VPMADDWD multiplies them
// by the query and sums pairs into int32: 4 extensions, 12 multiplies and
// 12 integer adds a position for the same shape, then one conversion and
// two scale products. The integer sum is exact, so the kernels and
// attnScoresQ8I16Go below agree bit for bit whatever order they add in,
// and a head's score does not depend on the pass or the span. On a Zen 3
// host (BenchmarkAttnQ8ScoresI16, thread CPU, the two kernels alternating,
// loaded machine) the integer scores took 0.82–0.84 of the float kernels'
// time for one cache-resident group of 135M (three heads of 64 over 320
// positions, rounding the queries included) and 0.91–0.95 over the key
// caches of a ten-stream step, which come from memory.
//
// A pair's sum is at most 2·128·32767 in magnitude, a head of hd values
// hd/2 of them: up to q8I16MaxDim values the int32 sum cannot overflow.

// q8I16MaxDim is the largest head size the integer kernels take; larger
// heads keep the float kernels.
const q8I16MaxDim = 256

// queryI16 is a group's queries rounded to int16 for the integer kernels:
// head j's values at q[j·hd:], and m[j] its scale times the score scale.
type queryI16 struct {
	q []int16
	m []float32
}

// kvQuantize16Vec rounds x·id to int16 into dst (len(x) a multiple of
// sixteen); nil where no assembly exists.
var kvQuantize16Vec func(dst []int16, x []float32, id float32)

// set rounds the g heads of hd values in q, and reports false when a head
// has a value no scale describes (NaN or infinity), which the float
// kernels then carry into its scores.
func (qq *queryI16) set(q []float32, hd int, scale float32) bool {
	g := len(q) / hd
	if cap(qq.q) < g*hd {
		qq.q = make([]int16, g*hd)
	}
	if cap(qq.m) < g {
		qq.m = make([]float32, g)
	}
	qq.q, qq.m = qq.q[:g*hd], qq.m[:g]
	for j := range g {
		src, dst := q[j*hd:(j+1)*hd], qq.q[j*hd:(j+1)*hd]
		vec := kvAbsMaxVec != nil && kvQuantize16Vec != nil && hd%groupVecMinDim == 0
		var amax float32
		if vec {
			amax = kvAbsMaxVec(src)
		} else {
			for _, v := range src {
				amax = max(amax, abs32(v))
			}
		}
		if amax != amax || amax > math.MaxFloat32 {
			return false
		}
		if amax == 0 {
			clear(dst)
			qq.m[j] = 0
			continue
		}
		id := 32767 / amax
		qq.m[j] = amax / 32767 * scale
		if vec {
			kvQuantize16Vec(dst, src, id)
			continue
		}
		for i, v := range src {
			dst[i] = int16(math.RoundToEven(float64(v * id)))
		}
	}
	return true
}

// attnScoresQ8I16Go is the integer kernels' arithmetic in Go: head j's
// score of position p at scores[j·stride+p], over span row-major key rows.
func attnScoresQ8I16Go(scores []float32, stride int, qq *queryI16, keys []int8, kscale []float32, hd, span int) {
	for j := range qq.m {
		q := qq.q[j*hd : (j+1)*hd]
		for p := range span {
			k := keys[p*hd : (p+1)*hd]
			var sum int32
			for i, v := range k {
				sum += int32(v) * int32(q[i])
			}
			// Each product rounded on its own, as the kernels' two VMULPS.
			scores[j*stride+p] = float32(float32(sum)*qq.m[j]) * kscale[p]
		}
	}
}
