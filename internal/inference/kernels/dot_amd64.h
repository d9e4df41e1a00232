// F16TAIL finishes one token of one F16 row like dotF16AVX2: acc0+acc1,
// the horizontal sum, the scalar tail over the last CX values (weights at
// wr, floats at xr), then stores the float at m. Uses X13, X14, AX, DX,
// R12 and R13 as scratch. Shared by the four-token dot (dot_amd64.s) and
// the two-row tile (dot_avx512vl_amd64.s), whose values must equal the
// one-token dot's bit for bit.
#define F16TAIL(acc0, acc1, x0, wr, xr, m, lbl, done) \
	VADDPS       acc1, acc0, acc0 \
	VEXTRACTF128 $1, acc0, X13 \
	VADDPS       X13, x0, x0 \
	VHADDPS      x0, x0, x0 \
	VHADDPS      x0, x0, x0 \
	MOVQ         CX, DX \
	MOVQ         wr, R12 \
	MOVQ         xr, R13 \
	TESTQ        DX, DX \
	JEQ          done \
lbl: \
	MOVWLZX      (R12), AX \
	VMOVD        AX, X14 \
	VCVTPH2PS    X14, X14 \
	VFMADD231SS  (R13), X14, x0 \
	ADDQ         $2, R12 \
	ADDQ         $4, R13 \
	DECQ         DX \
	JNZ          lbl \
done: \
	VMOVSS       x0, m
