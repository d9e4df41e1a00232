package kernels

import "math"

// Attention over an int8 KV cache, the compact alternative to the
// half-precision one (llama.cpp offers q8_0 for the same reason with
// --cache-type-k/v). Decode reads every cached row of every sequence for
// every token; ten streams of the 15M shape at ~320 positions read more KV
// bytes per step than weight bytes. Here a cached head row is hd int8
// values and one float32 scale (absmax / 127, as Q8_0 blocks have), hd + 4
// bytes instead of 2·hd: 0.54× for heads of 48 values, 0.53× for 64. One
// scale per row rather than per 32 values keeps heads of 48 (the 15M shape)
// whole and the kernels simple; the error is that of Q8_0 over a block of
// hd values. On one goroutine, the attention of a ten-stream step at 320
// positions (BenchmarkAttnQ8DecodeStep, loaded host) took 0.63–0.65 ms over
// this cache against 1.5–1.9 ms over half floats for the 15M shape (its
// 12 MB of rows stay in the L3 cache beside the weights, the 22 MB of
// halves do not), 5.6 against 7.4 ms for SmolLM2-135M. The AVX2 kernels on
// a Zen 3 host (alternating with the half-precision ones) took 0.53–0.64 of
// their time for 15M and 0.74–0.76 for 135M, and 0.93–0.98 of it for one
// cache-resident group (BenchmarkAttnQ8).
//
// The vector kernels (AVX-512 or AVX2 with FMA) take up to three query
// heads of a KV group per pass over its rows. A head's result depends only
// on its query and the rows, never on the other heads or the span, which
// keeps decode batch-invariant. The two families sum in other orders, so
// their results differ in the last bits; a process uses one of them. The
// AVX2 family's scores are integer products over the query rounded to
// int16 (attn_q8_i16.go); its float score kernels remain for heads of more
// than 256 values.

// Int8KVVector reports whether attention over the int8 cache has vector
// kernels on this CPU (the avx512 and avx2 families); without them the
// half-precision cache is faster.
func Int8KVVector() bool { return attnScoresQ8Vec != nil }

// QuantizeKVRow stores src as int8 values in dst (len(src) of them) and
// returns their scale: src[i] ≈ scale · dst[i].
func QuantizeKVRow(dst []int8, src []float32) float32 {
	dst = dst[:len(src)]
	vec := kvAbsMaxVec != nil && len(src) >= groupVecMinDim && len(src)%groupVecMinDim == 0
	var amax float32
	if vec {
		amax = kvAbsMaxVec(src)
	} else {
		for _, v := range src {
			amax = max(amax, abs32(v))
		}
	}
	if amax == 0 || amax != amax || amax > math.MaxFloat32 {
		// An all-zero row, or one no scale describes (NaN or infinity,
		// which the half-precision cache would keep): zero values with a
		// NaN scale carry the NaN into the scores as F16 would.
		clear(dst)
		if amax == 0 {
			return 0
		}
		return float32(math.NaN())
	}
	d := amax / 127
	id := 127 / amax
	if vec {
		kvQuantizeVec(dst, src, id)
		return d
	}
	for i, v := range src {
		dst[i] = int8(math.RoundToEven(float64(v * id)))
	}
	return d
}

// AttnScoresGroupQ8 sets scores[j·span+p] = scale · kscale[from+p] · (q_j ·
// key from+p) for every query head j < len(q)/hd and position p < span,
// where keys and kscale are one KV head's key cache from position zero, in
// the layout StoreKeyQ8 writes (row-major, key p the hd int8 values at
// keys[p·hd:], or in blocks, see attn_q8_blocks.go). values, when not nil,
// is the head's value rows from position zero, which the weighted sum reads
// next; the row-major vector kernels ask for them while they walk the keys.
func AttnScoresGroupQ8(scores, q []float32, keys []int8, kscale []float32, values []int8, hd, from, span int, scale float32) {
	AttnScoresGroupQ8With(scores, q, keys, kscale, values, hd, from, span, scale, nil)
}

// QueryScratch is a caller's scratch for AttnScoresGroupQ8With: the queries
// rounded to int8 for the blocked kernels, or to int16 for the AVX2
// family's integer kernels. The zero value is ready to use; one must not be
// used by two goroutines at once.
type QueryScratch struct {
	qq queryQ8
	qi queryI16
}

// AttnScoresGroupQ8With is AttnScoresGroupQ8 rounding the queries into the
// caller's scratch sc (nil takes one from the shared free list). Attention
// runs as many small work items on both cores, and the free list's channel,
// taken by both for every item, was a contended lock: a worker that keeps
// one scratch for all the items it claims takes no lock for them.
func AttnScoresGroupQ8With(scores, q []float32, keys []int8, kscale []float32, values []int8, hd, from, span int, scale float32, sc *QueryScratch) {
	g := len(q) / hd
	if span == 0 || g == 0 {
		return
	}
	scores = scores[:g*span]
	if blockedKeys(hd) {
		var qq *queryQ8
		if sc != nil {
			qq = &sc.qq
		}
		attnScoresQ8Blocks(scores, q[:g*hd], keys, kscale, values, hd, from, span, scale, qq)
		return
	}
	keys = keys[from*hd : (from+span)*hd]
	kscale = kscale[from : from+span]
	if values == nil {
		values = keys
	} else {
		values = values[from*hd : (from+span)*hd]
	}
	if hd%groupVecMinDim == 0 && attnScoresQ8Vec != nil {
		var qi *queryI16
		if sc != nil {
			qi = &sc.qi
		}
		attnScoresQ8Vec(scores, q[:g*hd], keys, kscale, values, hd, span, scale, qi)
		return
	}
	for j := range g {
		attnScoresQ8Go(scores[j*span:(j+1)*span], q[j*hd:(j+1)*hd], keys, kscale, hd, span, scale)
	}
}

// AttnWeightedSumGroupQ8 sets out[j·hd:(j+1)·hd] = Σ_p (w[j·span+p] ·
// vscale[p]) · value p for every head j < len(out)/hd, where value p is the
// hd int8 values values[p·hd:].
func AttnWeightedSumGroupQ8(out, w []float32, values []int8, vscale []float32, hd, span int) {
	g := len(out) / hd
	if g == 0 {
		return
	}
	out = out[:g*hd]
	if span == 0 {
		clear(out)
		return
	}
	w = w[:g*span]
	values = values[:span*hd]
	vscale = vscale[:span]
	if hd%groupVecMinDim == 0 && attnWeightedSumQ8Vec != nil {
		attnWeightedSumQ8Vec(out, w, values, vscale, hd, span)
		return
	}
	for j := range g {
		attnWeightedSumQ8Go(out[j*hd:(j+1)*hd], w[j*span:(j+1)*span], values, vscale, hd, span)
	}
}

// Vector implementations chosen at init (attn_q8_amd64.go); nil where no
// assembly exists. They get all heads of a group, lengths checked above.
var (
	attnScoresQ8Vec      func(scores, q []float32, keys []int8, kscale []float32, values []int8, hd, span int, scale float32, qi *queryI16)
	attnWeightedSumQ8Vec func(out, w []float32, values []int8, vscale []float32, hd, span int)
	kvAbsMaxVec          func(x []float32) float32
	kvQuantizeVec        func(dst []int8, x []float32, id float32)
)

func attnScoresQ8Go(scores, q []float32, keys []int8, kscale []float32, hd, span int, scale float32) {
	for p := range span {
		k := keys[p*hd : (p+1)*hd]
		var s float32
		for i, v := range k {
			s += q[i] * float32(v)
		}
		scores[p] = s * scale * kscale[p]
	}
}

func attnWeightedSumQ8Go(out, w []float32, values []int8, vscale []float32, hd, span int) {
	clear(out)
	for p := range span {
		c := w[p] * vscale[p]
		v := values[p*hd : (p+1)*hd]
		for i, x := range v {
			out[i] += c * float32(x)
		}
	}
}
