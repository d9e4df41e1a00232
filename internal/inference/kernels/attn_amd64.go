//go:build !purego

package kernels

func init() {
	if !hasAVX2 {
		return
	}
	attnScoresVec = attnScoresAsm
	attnWeightedSumVec = attnWeightedSumAsm
	softmax = softmaxAsm
	if hasVNNI {
		softmax = softmax512
	}
	siluMul = siluMulAsm
}

//go:noescape
func attnScoresAVX2(out, q, k *float32, stride, hd, n int, scale float32)

//go:noescape
func attnWeightedSumAVX2(out, w, v *float32, stride, hd, n int)

//go:noescape
func softmaxAVX2(x *float32, n int)

//go:noescape
func softmaxAVX512(x *float32, n int)

//go:noescape
func siluMulAVX2(gate, up *float32, n int)

// The callers have checked the lengths: keys and values hold
// (n-1)·stride + hd values, and hd is a multiple of 8.

func attnScoresAsm(scores, q, keys []float32, stride int, scale float32) {
	attnScoresAVX2(&scores[0], &q[0], &keys[0], stride, len(q), len(scores), scale)
}

func attnWeightedSumAsm(out, w, values []float32, stride int) {
	attnWeightedSumAVX2(&out[0], &w[0], &values[0], stride, len(out), len(w))
}

func softmaxAsm(x []float32) { softmaxAVX2(&x[0], len(x)) }

// softmax512 is the AVX-512 softmax (softmax512_amd64.s), used with the
// VNNI family (every CPU that has it has AVX-512 F).
func softmax512(x []float32) { softmaxAVX512(&x[0], len(x)) }

func siluMulAsm(gate, up []float32) {
	if len(gate) == 0 {
		return
	}
	siluMulAVX2(&gate[0], &up[0], len(gate))
}
