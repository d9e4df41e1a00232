//go:build !purego

package kernels

//go:noescape
func quantizeQ8BlocksAVX2(x *float32, nb int, qs *int8, qstep int, d *float32, dstep int, corr *int16, sums *int32)

//go:noescape
func quantizeQ8KBlockAVX2(x *float32, qs *int8) float32

func init() {
	if hasAVX2 {
		quantizeQ8Blocks = quantizeQ8BlocksAsm
		quantizeQ8K = quantizeQ8KAsm
	}
}

// quantizeQ8KAsm is quantizeQ8Block over one Q8_K block in assembly.
func quantizeQ8KAsm(q []int8, x []float32) float32 {
	_, _ = q[QK_K-1], x[QK_K-1]
	return quantizeQ8KBlockAVX2(&x[0], &q[0])
}

// quantizeQ8BlocksAsm is quantizeQ8BlocksGo in assembly; the Go wrapper
// checks that the last block's outputs are in bounds.
func quantizeQ8BlocksAsm(x []float32, qs []int8, qStep int, d []float32, dStep int, corr []int16, sums []int32) {
	nb := len(x) / QK8_0
	if nb == 0 {
		return
	}
	last := (nb - 1) * qStep
	_ = qs[last+QK8_0-1]
	_ = corr[last/2+QK8_0/2-1]
	_ = d[(nb-1)*dStep]
	_ = sums[(nb-1)*dStep]
	quantizeQ8BlocksAVX2(&x[0], nb, &qs[0], qStep, &d[0], 4*dStep, &corr[0], &sums[0])
}
