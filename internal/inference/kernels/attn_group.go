package kernels

// Grouped attention over a half-precision KV cache. Under grouped-query
// attention g query heads share one cached key/value head (SmolLM2-135M: 9
// over 3, Qwen2.5-0.5B: 14 over 2), so the per-head kernels of attn.go read
// every cached row g times. These kernels take the g query heads of a KV
// group together and read each cached row once per group (the assembly
// makes one pass per two, three or four heads), and the cache holds IEEE half
// floats, as llama.cpp's default F16 KV cache does, which halves the bytes
// read per token again.
//
// A head's result does not depend on g, on its place in the group or on the
// other heads: the assembly gives every head the same sequence of operations,
// which keeps decode batch-invariant. The AVX-512 scores sum in another
// order than the AVX2 ones, so the two families' scores differ in the last
// bits; a process uses one family for every sequence.

// groupVecMinDim is the head size granularity of the vector kernels: they
// work on sixteen values at a time.
const groupVecMinDim = 16

// AttnScoresGroup sets scores[j·span+p] = scale · (q[j·hd:(j+1)·hd] · key p)
// for every query head j < len(q)/hd and position p < span, where key p is
// the hd half floats keys[p·stride+off:]: the scores of all query heads of
// one KV group over its cached keys. values, when not nil, is the value
// cache the weighted sum reads next (same layout); the vector kernels ask
// for its rows while they walk the keys.
func AttnScoresGroup(scores, q []float32, keys, values []uint16, hd, span, stride, off int, scale float32) {
	g := len(q) / hd
	if span == 0 || g == 0 {
		return
	}
	scores = scores[:g*span]
	keys = keys[off : (span-1)*stride+off+hd]
	if values == nil {
		values = keys
	} else {
		values = values[off : (span-1)*stride+off+hd]
	}
	if hd%groupVecMinDim == 0 && attnScoresGroupVec != nil {
		attnScoresGroupVec(scores, q[:g*hd], keys, values, hd, span, stride, scale)
		return
	}
	attnScoresGroupGo(scores, q[:g*hd], keys, hd, span, stride, scale)
}

// AttnWeightedSumGroup sets out[j·hd:(j+1)·hd] = Σ_p w[j·span+p] · value p
// for every head j < len(out)/hd, where value p is the hd half floats
// values[p·stride+off:]: the attention outputs of all query heads of one KV
// group.
func AttnWeightedSumGroup(out, w []float32, values []uint16, hd, span, stride, off int) {
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
	values = values[off : (span-1)*stride+off+hd]
	if hd%groupVecMinDim == 0 && attnWeightedSumGroupVec != nil {
		attnWeightedSumGroupVec(out, w, values, hd, span, stride)
		return
	}
	attnWeightedSumGroupGo(out, w, values, hd, span, stride)
}

// FloatsToHalves converts src to IEEE half floats in dst (len(src) values),
// rounding to nearest even as FloatToHalf does: how rows enter the KV cache.
func FloatsToHalves(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	n := 0
	if floatsToHalvesVec != nil {
		n = len(src) &^ 7
		if n > 0 {
			floatsToHalvesVec(dst[:n], src[:n])
		}
	}
	for i := n; i < len(src); i++ {
		dst[i] = FloatToHalf(src[i])
	}
}

// HalvesToFloats converts IEEE half floats to float32 (len(src) values).
func HalvesToFloats(dst []float32, src []uint16) {
	dst = dst[:len(src)]
	for i, h := range src {
		dst[i] = f16Table[h]
	}
}

// Vector implementations chosen at init (attn_group_amd64.go); nil where no
// assembly exists. Lengths are checked by the callers above, and floatsToHalvesVec
// gets a multiple of eight values.
var (
	attnScoresGroupVec      func(scores, q []float32, keys, values []uint16, hd, span, stride int, scale float32)
	attnWeightedSumGroupVec func(out, w []float32, values []uint16, hd, span, stride int)
	floatsToHalvesVec       func(dst []uint16, src []float32)
)

// halfRow converts one cached row into buf (grown when the head is larger
// than the usual 256 values), so that the portable kernels also convert a
// row once for the whole group.
func halfRow(buf []float32, row []uint16) []float32 {
	if cap(buf) < len(row) {
		buf = make([]float32, len(row))
	}
	buf = buf[:len(row)]
	HalvesToFloats(buf, row)
	return buf
}

func attnScoresGroupGo(scores, q []float32, keys []uint16, hd, span, stride int, scale float32) {
	g := len(q) / hd
	var stack [256]float32
	k := stack[:0]
	for p := range span {
		k = halfRow(k, keys[p*stride:p*stride+hd])
		for j := range g {
			scores[j*span+p] = dotF32VecGo(q[j*hd:(j+1)*hd], k) * scale
		}
	}
}

func attnWeightedSumGroupGo(out, w []float32, values []uint16, hd, span, stride int) {
	g := len(out) / hd
	clear(out)
	var stack [256]float32
	v := stack[:0]
	for p := range span {
		v = halfRow(v, values[p*stride:p*stride+hd])
		for j := range g {
			axpyF32Go(out[j*hd:(j+1)*hd], w[j*span+p], v)
		}
	}
}
