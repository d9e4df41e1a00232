//go:build !purego

#include "textflag.h"

// Activation quantisation to Q8_0 for the tiled kernels, the same numbers as
// quantizeQ8Block: d = amax/127, id = 1/d (0 when d is 0), q = round(x·id)
// with ties away from zero, which VROUNDPS lacks, so it is a truncation of
// x·id plus the largest float below one half with x·id's sign (ROUNDAWAY).

DATA q8absMask<>+0(SB)/4, $0x7fffffff
GLOBL q8absMask<>(SB), RODATA|NOPTR, $4
DATA q8signMask<>+0(SB)/4, $0x80000000
GLOBL q8signMask<>(SB), RODATA|NOPTR, $4
DATA q8half<>+0(SB)/4, $0x3effffff
GLOBL q8half<>(SB), RODATA|NOPTR, $4
DATA q8one<>+0(SB)/4, $0x3f800000
GLOBL q8one<>(SB), RODATA|NOPTR, $4
DATA q8k127<>+0(SB)/4, $0x42fe0000
GLOBL q8k127<>(SB), RODATA|NOPTR, $4
DATA q8eights<>+0(SB)/4, $0x08080808
GLOBL q8eights<>(SB), RODATA|NOPTR, $4
DATA q8ones16<>+0(SB)/4, $0x00010001
GLOBL q8ones16<>(SB), RODATA|NOPTR, $4
DATA q8perm<>+0(SB)/4, $0
DATA q8perm<>+4(SB)/4, $4
DATA q8perm<>+8(SB)/4, $1
DATA q8perm<>+12(SB)/4, $5
DATA q8perm<>+16(SB)/4, $2
DATA q8perm<>+20(SB)/4, $6
DATA q8perm<>+24(SB)/4, $3
DATA q8perm<>+28(SB)/4, $7
GLOBL q8perm<>(SB), RODATA|NOPTR, $32

// ROUNDAWAY prepares the floats of y for a truncation (VCVTTPS2DQ) that
// rounds them to integers with ties away from zero: it adds h, the largest
// float below 0.5 (0x3effffff), with y's sign. Adding 0.5 itself would be
// wrong where the sum rounds up (0.49999997 + 0.5 is 1 in float32); with h
// the truncated sum equals math.Round for every float32 of magnitude up to
// 128 (TestRoundAwayExhaustive checks all of them), which covers the
// quantisers' |x·id| ≤ 127 (Y12 sign mask, Y13 h; Y10 scratch). It
// replaced a truncation, a remainder test and a correction: 3 instructions
// a vector instead of 8.
#define ROUNDAWAY(y) \
	VANDPS Y12, y, Y10 \
	VORPS  Y13, Y10, Y10 \
	VADDPS Y10, y, y

// func quantizeQ8BlocksAVX2(x *float32, nb int, qs *int8, qstep int, d *float32, dstep int, corr *int16, sums *int32)
//
// Quantises nb blocks of 32 floats at x: block b's values go to
// qs + b·qstep, its scale to d + b·dstep (bytes), its sixteen pair sums
// 8·(q[2i]+q[2i+1]) to corr + b·qstep and the sum of its 32 values to
// sums + b·dstep (from the pair sums, already in a register: the packed
// kernels' block corrections need it, and a pass over the bytes in Go cost
// 0.2 ns a value).
TEXT ·quantizeQ8BlocksAVX2(SB), NOSPLIT, $0-64
	MOVQ         x+0(FP), SI
	MOVQ         nb+8(FP), CX
	MOVQ         qs+16(FP), DI
	MOVQ         qstep+24(FP), R8
	MOVQ         d+32(FP), DX
	MOVQ         dstep+40(FP), R9
	MOVQ         corr+48(FP), R10
	MOVQ         sums+56(FP), R11
	VBROADCASTSS q8absMask<>(SB), Y11
	VBROADCASTSS q8signMask<>(SB), Y12
	VBROADCASTSS q8half<>(SB), Y13
	VPBROADCASTD q8ones16<>(SB), Y14
	VPBROADCASTD q8eights<>(SB), Y15
	TESTQ        CX, CX
	JEQ          q8qdone

q8qloop:
	VMOVUPS      (SI), Y0
	VMOVUPS      32(SI), Y1
	VMOVUPS      64(SI), Y2
	VMOVUPS      96(SI), Y3
	VANDPS       Y11, Y0, Y4
	VANDPS       Y11, Y1, Y5
	VANDPS       Y11, Y2, Y6
	VANDPS       Y11, Y3, Y7
	VMAXPS       Y5, Y4, Y4
	VMAXPS       Y7, Y6, Y6
	VMAXPS       Y6, Y4, Y4
	VEXTRACTF128 $1, Y4, X5
	VMAXPS       X5, X4, X4
	VPERMILPS    $0x4e, X4, X5
	VMAXPS       X5, X4, X4
	VPERMILPS    $0xb1, X4, X5
	VMAXSS       X5, X4, X4
	// d = amax/127, stored; id = 1/d, or 0 when d is 0.
	VDIVSS       q8k127<>(SB), X4, X4
	VMOVSS       X4, (DX)
	VMOVSS       q8one<>(SB), X5
	VDIVSS       X4, X5, X5
	VXORPS       X6, X6, X6
	VCMPSS       $4, X6, X4, X6
	VANDPS       X6, X5, X5
	VBROADCASTSS X5, Y5
	VMULPS       Y5, Y0, Y0
	VMULPS       Y5, Y1, Y1
	VMULPS       Y5, Y2, Y2
	VMULPS       Y5, Y3, Y3
	ROUNDAWAY(Y0)
	ROUNDAWAY(Y1)
	ROUNDAWAY(Y2)
	ROUNDAWAY(Y3)
	VCVTTPS2DQ   Y0, Y0
	VCVTTPS2DQ   Y1, Y1
	VCVTTPS2DQ   Y2, Y2
	VCVTTPS2DQ   Y3, Y3
	// Pack to bytes; the packs work per 128-bit lane, so restore the
	// order with one dword permutation, as ggml does.
	VPACKSSDW    Y1, Y0, Y0
	VPACKSSDW    Y3, Y2, Y2
	VPACKSSWB    Y2, Y0, Y0
	VMOVDQU      q8perm<>(SB), Y1
	VPERMD       Y0, Y1, Y0
	VMOVDQU      Y0, (DI)
	VPMADDUBSW   Y0, Y15, Y0
	VMOVDQU      Y0, (R10)
	// The block's sum: the pair sums (8× each) added to eight dwords,
	// then across them, then divided by 8 (exactly: a multiple of 8).
	VPMADDWD     Y14, Y0, Y1
	VEXTRACTI128 $1, Y1, X2
	VPADDD       X2, X1, X1
	VPSHUFD      $0x4e, X1, X2
	VPADDD       X2, X1, X1
	VPSHUFD      $0xb1, X1, X2
	VPADDD       X2, X1, X1
	VPSRAD       $3, X1, X1
	VMOVD        X1, (R11)
	ADDQ         $128, SI
	ADDQ         R8, DI
	ADDQ         R8, R10
	ADDQ         R9, DX
	ADDQ         R9, R11
	DECQ         CX
	JNZ          q8qloop

q8qdone:
	VZEROUPPER
	RET

// func quantizeQ8KBlockAVX2(x *float32, qs *int8) float32
//
// Quantises one Q8_K block, 256 floats at x, to qs with one scale,
// returned: quantizeQ8Block's numbers (the largest magnitude maps to ±127,
// ties away from zero).
TEXT ·quantizeQ8KBlockAVX2(SB), NOSPLIT, $0-20
	MOVQ         x+0(FP), SI
	MOVQ         qs+8(FP), DI
	VBROADCASTSS q8absMask<>(SB), Y11
	VBROADCASTSS q8signMask<>(SB), Y12
	VBROADCASTSS q8half<>(SB), Y13
	// The largest magnitude, in four chains of eight lanes.
	VANDPS       (SI), Y11, Y4
	VANDPS       32(SI), Y11, Y5
	VANDPS       64(SI), Y11, Y6
	VANDPS       96(SI), Y11, Y7
	VANDPS       128(SI), Y11, Y0
	VANDPS       160(SI), Y11, Y1
	VANDPS       192(SI), Y11, Y2
	VANDPS       224(SI), Y11, Y3
	VMAXPS       Y0, Y4, Y4
	VMAXPS       Y1, Y5, Y5
	VMAXPS       Y2, Y6, Y6
	VMAXPS       Y3, Y7, Y7
	VANDPS       256(SI), Y11, Y0
	VANDPS       288(SI), Y11, Y1
	VANDPS       320(SI), Y11, Y2
	VANDPS       352(SI), Y11, Y3
	VMAXPS       Y0, Y4, Y4
	VMAXPS       Y1, Y5, Y5
	VMAXPS       Y2, Y6, Y6
	VMAXPS       Y3, Y7, Y7
	VANDPS       384(SI), Y11, Y0
	VANDPS       416(SI), Y11, Y1
	VANDPS       448(SI), Y11, Y2
	VANDPS       480(SI), Y11, Y3
	VMAXPS       Y0, Y4, Y4
	VMAXPS       Y1, Y5, Y5
	VMAXPS       Y2, Y6, Y6
	VMAXPS       Y3, Y7, Y7
	VANDPS       512(SI), Y11, Y0
	VANDPS       544(SI), Y11, Y1
	VANDPS       576(SI), Y11, Y2
	VANDPS       608(SI), Y11, Y3
	VMAXPS       Y0, Y4, Y4
	VMAXPS       Y1, Y5, Y5
	VMAXPS       Y2, Y6, Y6
	VMAXPS       Y3, Y7, Y7
	VANDPS       640(SI), Y11, Y0
	VANDPS       672(SI), Y11, Y1
	VANDPS       704(SI), Y11, Y2
	VANDPS       736(SI), Y11, Y3
	VMAXPS       Y0, Y4, Y4
	VMAXPS       Y1, Y5, Y5
	VMAXPS       Y2, Y6, Y6
	VMAXPS       Y3, Y7, Y7
	VANDPS       768(SI), Y11, Y0
	VANDPS       800(SI), Y11, Y1
	VANDPS       832(SI), Y11, Y2
	VANDPS       864(SI), Y11, Y3
	VMAXPS       Y0, Y4, Y4
	VMAXPS       Y1, Y5, Y5
	VMAXPS       Y2, Y6, Y6
	VMAXPS       Y3, Y7, Y7
	VANDPS       896(SI), Y11, Y0
	VANDPS       928(SI), Y11, Y1
	VANDPS       960(SI), Y11, Y2
	VANDPS       992(SI), Y11, Y3
	VMAXPS       Y0, Y4, Y4
	VMAXPS       Y1, Y5, Y5
	VMAXPS       Y2, Y6, Y6
	VMAXPS       Y3, Y7, Y7
	VMAXPS       Y5, Y4, Y4
	VMAXPS       Y7, Y6, Y6
	VMAXPS       Y6, Y4, Y4
	VEXTRACTF128 $1, Y4, X5
	VMAXPS       X5, X4, X4
	VPERMILPS    $0x4e, X4, X5
	VMAXPS       X5, X4, X4
	VPERMILPS    $0xb1, X4, X5
	VMAXSS       X5, X4, X4
	// d = amax/127, returned; id = 1/d, or 0 when d is 0.
	VDIVSS       q8k127<>(SB), X4, X4
	VMOVSS       X4, ret+16(FP)
	VMOVSS       q8one<>(SB), X5
	VDIVSS       X4, X5, X5
	VXORPS       X6, X6, X6
	VCMPSS       $4, X6, X4, X6
	VANDPS       X6, X5, X5
	VBROADCASTSS X5, Y5
	VMOVDQU      q8perm<>(SB), Y8
	MOVQ         $8, CX

q8kloop:
	VMULPS       (SI), Y5, Y0
	VMULPS       32(SI), Y5, Y1
	VMULPS       64(SI), Y5, Y2
	VMULPS       96(SI), Y5, Y3
	ROUNDAWAY(Y0)
	ROUNDAWAY(Y1)
	ROUNDAWAY(Y2)
	ROUNDAWAY(Y3)
	VCVTTPS2DQ   Y0, Y0
	VCVTTPS2DQ   Y1, Y1
	VCVTTPS2DQ   Y2, Y2
	VCVTTPS2DQ   Y3, Y3
	VPACKSSDW    Y1, Y0, Y0
	VPACKSSDW    Y3, Y2, Y2
	VPACKSSWB    Y2, Y0, Y0
	VPERMD       Y0, Y8, Y0
	VMOVDQU      Y0, (DI)
	ADDQ         $128, SI
	ADDQ         $32, DI
	DECQ         CX
	JNZ          q8kloop
	VZEROUPPER
	RET
