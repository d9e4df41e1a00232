//go:build !purego

package kernels

func init() {
	if hasAVX2 {
		argmaxF32 = argmaxF32Asm
	}
}

// maxF32AVX2 returns the largest non-NaN value of x[:n] (n a multiple of
// 8), or -Inf when there is none.
//
//go:noescape
func maxF32AVX2(x *float32, n int) float32

// indexF32AVX2 returns the first i < n (n a multiple of 8) with x[i] == v,
// or -1.
//
//go:noescape
func indexF32AVX2(x *float32, n int, v float32) int

// argmaxF32Asm finds the largest non-NaN value in one vector pass and then
// the first index holding it in a second pass that stops there. With x[0]
// not a NaN that is the single chain's pick: the first occurrence of the
// largest value, where -0 and +0 count as equal on both passes.
func argmaxF32Asm(x []float32) int {
	if len(x) < 16 {
		return argmaxOneChain(x)
	}
	if x[0] != x[0] {
		return 0
	}
	n := len(x) &^ 7
	m := maxF32AVX2(&x[0], n)
	for _, v := range x[n:] {
		if v > m {
			m = v
		}
	}
	if i := indexF32AVX2(&x[0], n, m); i >= 0 {
		return i
	}
	for i, v := range x[n:] {
		if v == m {
			return n + i
		}
	}
	return 0 // not reached: m is one of x's values
}
