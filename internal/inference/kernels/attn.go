package kernels

import "math"

// Attention and activation kernels. Decode spends a large share of its
// time outside the weight products on small problems (a 48- or 64-value
// head against a few hundred cached positions), where a call per position
// and a float64 exp per score cost more than the arithmetic; these
// functions do a whole head or row per call. On amd64 with AVX2+FMA
// attn_amd64.s replaces them; the Go versions here are the fallback and
// the reference TestAttnAsmMatchesGo holds the assembly to.
//
// The model's KV cache is half precision and read per KV group
// (attn_group.go); AttnScores and AttnWeightedSum serve float32 caches and
// are the per-head baseline the grouped kernels are tested and benchmarked
// against.

// AttnScores sets scores[p] = scale · (q · keys[p·stride+off : p·stride+off+len(q)])
// for every p < len(scores): one query head against the cached keys of its
// KV group, where each cached position is a row of stride values.
func AttnScores(scores, q, keys []float32, stride, off int, scale float32) {
	n, hd := len(scores), len(q)
	if n == 0 {
		return
	}
	keys = keys[off : (n-1)*stride+off+hd] // one bounds check for the whole call
	if hd > 0 && hd%8 == 0 && attnScoresVec != nil {
		attnScoresVec(scores, q, keys, stride, scale)
		return
	}
	attnScoresGo(scores, q, keys, stride, scale)
}

// Softmax replaces x with softmax(x) = exp(x - max) / Σ exp(x - max),
// computing exp with the float32 polynomial of ExpF32.
func Softmax(x []float32) {
	if len(x) == 0 {
		return
	}
	softmax(x)
}

// AttnWeightedSum sets out = Σ_p w[p] · values[p·stride+off : p·stride+off+len(out)]
// over p < len(w): the attention output of one head.
func AttnWeightedSum(out, w, values []float32, stride, off int) {
	n, hd := len(w), len(out)
	if n == 0 {
		clear(out)
		return
	}
	values = values[off : (n-1)*stride+off+hd]
	if hd > 0 && hd%8 == 0 && attnWeightedSumVec != nil {
		attnWeightedSumVec(out, w, values, stride)
		return
	}
	attnWeightedSumGo(out, w, values, stride)
}

// SiLUMul sets gate[i] = silu(gate[i]) · up[i] with silu(z) = z / (1 + e^-z):
// the SwiGLU activation of the feed-forward block.
func SiLUMul(gate, up []float32) {
	up = up[:len(gate)]
	siluMul(gate, up)
}

// Implementations chosen at init (attn_amd64.go); the vector ones are nil
// where no assembly exists.
var (
	attnScoresVec      func(scores, q, keys []float32, stride int, scale float32)
	attnWeightedSumVec func(out, w, values []float32, stride int)
	softmax            = softmaxGo
	siluMul            = siluMulGo
)

func attnScoresGo(scores, q, keys []float32, stride int, scale float32) {
	hd := len(q)
	for p := range scores {
		scores[p] = dotF32VecGo(q, keys[p*stride:p*stride+hd]) * scale
	}
}

func attnWeightedSumGo(out, w, values []float32, stride int) {
	hd := len(out)
	clear(out)
	for p, a := range w {
		axpyF32Go(out, a, values[p*stride:p*stride+hd])
	}
}

func softmaxGo(x []float32) {
	m := x[0]
	for _, v := range x[1:] {
		m = max(m, v)
	}
	var sum float32
	for i, v := range x {
		e := ExpF32(v - m)
		x[i] = e
		sum += e
	}
	inv := 1 / sum
	for i := range x {
		x[i] *= inv
	}
}

func siluMulGo(gate, up []float32) {
	for i, g := range gate {
		gate[i] = g / (1 + ExpF32(-g)) * up[i]
	}
}

// Constants of the Cephes expf approximation that ExpF32 and the assembly
// share.
const (
	expHi    = 88.3762626647949
	expLo    = -88.3762626647949
	expLog2e = 1.44269504088896341
	expC1    = 0.693359375
	expC2    = -2.12194440e-4
	expP0    = 1.9875691500e-4
	expP1    = 1.3981999507e-3
	expP2    = 8.3334519073e-3
	expP3    = 4.1665795894e-2
	expP4    = 1.6666665459e-1
	expP5    = 5.0000001201e-1
)

// ExpF32 is e^x in float32 with a relative error of about 1e-7: x is
// clamped to ±88.38, reduced to r = x - n·ln2 (ln2 split in two so the
// subtraction is exact), e^r comes from a degree-5 polynomial and 2^n is
// written into the exponent bits. Inputs below about -88 give exactly 0.
func ExpF32(x float32) float32 {
	x = min(max(x, expLo), expHi)
	fx := float32(math.Floor(float64(x*expLog2e + 0.5)))
	x -= fx * expC1
	x -= fx * expC2
	y := float32(expP0)
	y = y*x + expP1
	y = y*x + expP2
	y = y*x + expP3
	y = y*x + expP4
	y = y*x + expP5
	y = y*x*x + x + 1
	return y * math.Float32frombits(uint32(int32(fx)+127)<<23)
}
