//go:build !purego

package kernels

// The VNNI forms of the Q4_K and Q6_K block kernels (kquant_vnni_amd64.s),
// equal to the AVX2 ones bit for bit.

//go:noescape
func q4KBlockVNNI(qs *byte, x *int8, sc *[8]int16) int32

//go:noescape
func q6KBlockVNNI(blk *byte, x *int8) int32

//go:noescape
func q4KBlockX4VNNI(qs *byte, x *[4]*int8, sc *[8]int16, out *[4]int32)

//go:noescape
func q6KBlockX4VNNI(blk *byte, x *[4]*int8, out *[4]int32)

// kquantVNNI reports whether the Q4_K and Q6_K products use the VNNI block
// kernels. The dispatch is a branch rather than a function variable so the
// calls stay direct and their pointer arguments stay on the stack.
var kquantVNNI bool

func init() { kquantVNNI = hasVNNI }

func q4KBlock(qs *byte, x *int8, sc *[8]int16) int32 {
	if kquantVNNI {
		return q4KBlockVNNI(qs, x, sc)
	}
	return q4KBlockAVX2(qs, x, sc)
}

func q6KBlock(blk *byte, x *int8) int32 {
	if kquantVNNI {
		return q6KBlockVNNI(blk, x)
	}
	return q6KBlockAVX2(blk, x)
}

func q4KBlockX4(qs *byte, x *[4]*int8, sc *[8]int16, out *[4]int32) {
	if kquantVNNI {
		q4KBlockX4VNNI(qs, x, sc, out)
		return
	}
	q4KBlockX4AVX2(qs, x, sc, out)
}

func q6KBlockX4(blk *byte, x *[4]*int8, out *[4]int32) {
	if kquantVNNI {
		q6KBlockX4VNNI(blk, x, out)
		return
	}
	q6KBlockX4AVX2(blk, x, out)
}
