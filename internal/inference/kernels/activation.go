package kernels

import (
	"math"

	"partnerapi/internal/inference/gguf"
)

// activation is an input vector prepared once per matrix product for one
// weight type, as ggml does: float weights read F directly; Q8_0 and Q4_0
// weights take x quantised to Q8_0 (one scale per 32 values); Q4_K and Q6_K
// take x quantised to Q8_K (one scale per 256 values plus the sums of each
// 16-value group, which fold the Q4_K minimums into one multiply).
// Assembly kernels replace the row dot functions and read these slices.
type activation struct {
	f    []float32
	d    []float32 // per block scale
	qs   []int8
	sums []int32 // Q8_K only: Σ qs over each group of 16
}

// kind of activation a weight type needs.
type actKind uint8

const (
	actFloat actKind = iota
	actQ8_0
	actQ8_K
	actKinds // the number of kinds
)

func activationKind(t gguf.GGMLType) actKind {
	switch t {
	case gguf.Q8_0, gguf.Q4_0, gguf.Q5_0, gguf.Q5_1, gguf.IQ4_NL:
		return actQ8_0
	case gguf.Q2_K, gguf.Q3_K, gguf.Q4_K, gguf.Q5_K, gguf.Q6_K:
		return actQ8_K
	}
	return actFloat
}

// prepare fills a for x, reusing a's slices.
func (a *activation) prepare(kind actKind, x []float32) {
	switch kind {
	case actFloat:
		a.f = x
	case actQ8_0:
		a.quantize(x, QK8_0, false)
	case actQ8_K:
		a.quantize(x, QK_K, true)
	}
}

func (a *activation) quantize(x []float32, block int, withSums bool) {
	n := len(x)
	a.d = grow(a.d, n/block)
	a.qs = grow(a.qs, n)
	if withSums {
		a.sums = grow(a.sums, n/16)
	}
	quantize := quantizeQ8Block
	if block == QK_K {
		quantize = quantizeQ8K
	}
	for b := 0; b < n/block; b++ {
		qb := a.qs[b*block : (b+1)*block]
		a.d[b] = quantize(qb, x[b*block:(b+1)*block])
		if withSums {
			for g := 0; g < block/16; g++ {
				var s int32
				for _, q := range qb[16*g : 16*g+16] {
					s += int32(q)
				}
				a.sums[b*block/16+g] = s
			}
		}
	}
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// quantizeQ8K quantises one Q8_K block (QK_K values) to q as
// quantizeQ8Block does; the assembly kernels replace it where they are in
// use (at 11.7 ns a value in Go, ten tokens' activations of a 2048-column
// product took longer to quantise than the packed Q4_K product of them).
var quantizeQ8K = quantizeQ8Block

// quantizeQ8Block quantises x to q (same length) with one scale, returned:
// the largest magnitude maps to ±127 and values round half away from zero,
// as ggml's quantize_row_q8_0 does.
func quantizeQ8Block(q []int8, x []float32) float32 {
	var amax float32
	for _, v := range x {
		amax = max(amax, abs32(v))
	}
	d := amax / 127
	var id float32
	if d != 0 {
		id = 1 / d
	}
	q = q[:len(x)]
	for j, v := range x {
		q[j] = int8(math.Round(float64(v * id)))
	}
	return d
}
