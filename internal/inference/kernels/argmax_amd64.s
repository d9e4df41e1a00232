//go:build !purego

#include "textflag.h"

// func argmaxAVX512(x *float32, n int) (idx int, max float32)
//
// The first index of the largest non-NaN value of x[0:n] (n a positive
// multiple of sixteen) and that value; -Inf and 0 when every value is NaN
// or -Inf. The first pass keeps four running maxima (VMAXPS returns its
// second source, in Go's operand order the first, when either is NaN, and
// the running maximum is that source, so NaNs are passed over); the second finds the first lane equal
// to the maximum. A maximum is exact whatever the order; -0 and +0 compare
// equal, as they do in the Go loop, which keeps the first of them.
TEXT ·argmaxAVX512(SB), NOSPLIT, $0-28
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	MOVL         $0xff800000, AX
	VPBROADCASTD AX, Z0
	VMOVAPS      Z0, Z1
	VMOVAPS      Z0, Z2
	VMOVAPS      Z0, Z3
	XORQ         R10, R10

	// Blocks of sixty-four values, then of sixteen.
	MOVQ CX, DX
	ANDQ $-64, DX

max64:
	CMPQ   R10, DX
	JGE    max16
	VMOVUPS (SI)(R10*4), Z4
	VMOVUPS 64(SI)(R10*4), Z5
	VMOVUPS 128(SI)(R10*4), Z6
	VMOVUPS 192(SI)(R10*4), Z7
	VMAXPS  Z0, Z4, Z0
	VMAXPS  Z1, Z5, Z1
	VMAXPS  Z2, Z6, Z2
	VMAXPS  Z3, Z7, Z3
	ADDQ    $64, R10
	JMP    max64

max16:
	CMPQ   R10, CX
	JGE    reduce
	VMOVUPS (SI)(R10*4), Z4
	VMAXPS  Z0, Z4, Z0
	ADDQ    $16, R10
	JMP    max16

reduce:
	VMAXPS        Z1, Z0, Z0
	VMAXPS        Z3, Z2, Z2
	VMAXPS        Z2, Z0, Z0
	VEXTRACTF64X4 $1, Z0, Y1
	VMAXPS        Y1, Y0, Y0
	VEXTRACTF128  $1, Y0, X1
	VMAXPS        X1, X0, X0
	VPERMILPS     $0x4e, X0, X1
	VMAXPS        X1, X0, X0
	VPERMILPS     $0xb1, X0, X1
	VMAXPS        X1, X0, X0
	VMOVSS        X0, max+24(FP)
	VBROADCASTSS  X0, Z0
	XORQ          R10, R10

find:
	CMPQ     R10, CX
	JGE      none
	VCMPPS   $0, (SI)(R10*4), Z0, K1
	KMOVW    K1, AX
	TESTL    AX, AX
	JNZ      found
	ADDQ     $16, R10
	JMP      find

found:
	TZCNTL AX, AX
	ADDQ   AX, R10
	MOVQ   R10, idx+16(FP)
	VZEROUPPER
	RET

none:
	MOVQ $0, idx+16(FP)
	VZEROUPPER
	RET
