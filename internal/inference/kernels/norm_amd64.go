//go:build !purego

package kernels

func init() {
	if !hasAVX2 {
		return
	}
	sumSquaresF64 = func(x []float32) float64 {
		if len(x) == 0 {
			return 0
		}
		return sumSquaresF64AVX2(&x[0], len(x))
	}
	scaleMulF32 = func(dst, src, w []float32, s float32) {
		scaleMulF32AVX2(&dst[0], &src[0], &w[0], s, len(src))
	}
}

//go:noescape
func sumSquaresF64AVX2(x *float32, n int) float64

//go:noescape
func scaleMulF32AVX2(dst, src, w *float32, s float32, n int)
