//go:build !purego

#include "textflag.h"

DATA argmaxNegInf<>+0(SB)/4, $0xff800000
GLOBL argmaxNegInf<>(SB), RODATA|NOPTR, $4

// func maxF32AVX2(x *float32, n int) float32
//
// VMAXPS returns its second source (the first operand in Go's order) when
// either input is a NaN, so with the accumulator there a NaN in x is
// passed over; the accumulators start at -Inf and never hold a NaN.
TEXT ·maxF32AVX2(SB), NOSPLIT, $0-20
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS argmaxNegInf<>(SB), Y0
	VMOVAPS      Y0, Y1
	VMOVAPS      Y0, Y2
	VMOVAPS      Y0, Y3

maxloop32:
	CMPQ    CX, $32
	JLT     maxloop8
	VMOVUPS (SI), Y4
	VMOVUPS 32(SI), Y5
	VMOVUPS 64(SI), Y6
	VMOVUPS 96(SI), Y7
	VMAXPS  Y0, Y4, Y0
	VMAXPS  Y1, Y5, Y1
	VMAXPS  Y2, Y6, Y2
	VMAXPS  Y3, Y7, Y3
	ADDQ    $128, SI
	SUBQ    $32, CX
	JMP     maxloop32

maxloop8:
	CMPQ    CX, $8
	JLT     maxreduce
	VMOVUPS (SI), Y4
	VMAXPS  Y0, Y4, Y0
	ADDQ    $32, SI
	SUBQ    $8, CX
	JMP     maxloop8

maxreduce:
	VMAXPS       Y1, Y0, Y0
	VMAXPS       Y3, Y2, Y2
	VMAXPS       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0x4e, X0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0xb1, X0, X1
	VMAXPS       X1, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+16(FP)
	RET

// func indexF32AVX2(x *float32, n int, v float32) int
TEXT ·indexF32AVX2(SB), NOSPLIT, $0-32
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS v+16(FP), Y0
	XORQ         AX, AX

idxloop32:
	LEAQ      32(AX), DX
	CMPQ      DX, CX
	JGT       idxloop8
	VCMPPS    $0, (SI)(AX*4), Y0, Y1
	VCMPPS    $0, 32(SI)(AX*4), Y0, Y2
	VCMPPS    $0, 64(SI)(AX*4), Y0, Y3
	VCMPPS    $0, 96(SI)(AX*4), Y0, Y4
	VORPS     Y1, Y2, Y5
	VORPS     Y3, Y4, Y6
	VORPS     Y5, Y6, Y5
	VMOVMSKPS Y5, DX
	TESTL     DX, DX
	JNZ       idxfound32
	ADDQ      $32, AX
	JMP       idxloop32

idxfound32:
	// The first of the four compares with a match holds the answer.
	VMOVMSKPS Y1, DX
	TESTL     DX, DX
	JNZ       idxfound
	ADDQ      $8, AX
	VMOVMSKPS Y2, DX
	TESTL     DX, DX
	JNZ       idxfound
	ADDQ      $8, AX
	VMOVMSKPS Y3, DX
	TESTL     DX, DX
	JNZ       idxfound
	ADDQ      $8, AX
	VMOVMSKPS Y4, DX
	JMP       idxfound

idxloop8:
	CMPQ      AX, CX
	JGE       idxnone
	VCMPPS    $0, (SI)(AX*4), Y0, Y1
	VMOVMSKPS Y1, DX
	TESTL     DX, DX
	JNZ       idxfound
	ADDQ      $8, AX
	JMP       idxloop8

idxfound:
	BSFL       DX, DX
	ADDQ       DX, AX
	MOVQ       AX, ret+24(FP)
	VZEROUPPER
	RET

idxnone:
	MOVQ       $-1, ret+24(FP)
	VZEROUPPER
	RET
