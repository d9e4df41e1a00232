//go:build !purego

package kernels

func init() {
	if hasVNNI {
		argmaxVec = argmaxAsm
	}
}

//go:noescape
func argmaxAVX512(x *float32, n int) (idx int, max float32)

func argmaxAsm(x []float32) (int, float32) { return argmaxAVX512(&x[0], len(x)) }
