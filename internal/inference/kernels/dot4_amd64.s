//go:build !purego

#include "textflag.h"

// Q4WEIGHTS expands the 16 nibble bytes at m into 32 signed bytes in v
// (low nibbles are values 0–15, high nibbles 16–31; both offset by 8).
// Y14 holds 0x0F bytes, Y13 holds 8s.
#define Q4WEIGHTS(m, v, vx, t) \
	VMOVDQU     m, vx \
	VPSRLW      $4, vx, t \
	VINSERTI128 $1, t, v, v \
	VPAND       Y14, v, v \
	VPSUBB      Y13, v, v

// Four-token kernels for batched prefill: each weight block is loaded and
// expanded once and multiplied by four activation vectors (x pointers in
// R8–R11, scale pointers in R12, R13, BX, DX, accumulators Y6–Y9).
#define X4TOKEN(xr, dr, acc) \
	VMOVDQU      (xr), Y4 \
	VPSIGNB      Y2, Y4, Y4 \
	VPMADDUBSW   Y4, Y3, Y4 \
	VPMADDWD     Y15, Y4, Y4 \
	VCVTDQ2PS    Y4, Y4 \
	VMULSS       (dr), X1, X5 \
	VBROADCASTSS X5, Y5 \
	VFMADD231PS  Y4, Y5, acc \
	ADDQ         $32, xr \
	ADDQ         $4, dr

#define X4PROLOGUE \
	MOVQ     w+0(FP), SI \
	MOVQ     x+8(FP), AX \
	MOVQ     0(AX), R8 \
	MOVQ     8(AX), R9 \
	MOVQ     16(AX), R10 \
	MOVQ     24(AX), R11 \
	MOVQ     d+16(FP), AX \
	MOVQ     0(AX), R12 \
	MOVQ     8(AX), R13 \
	MOVQ     16(AX), BX \
	MOVQ     24(AX), DX \
	MOVQ     nb+24(FP), CX \
	VXORPS   Y6, Y6, Y6 \
	VXORPS   Y7, Y7, Y7 \
	VXORPS   Y8, Y8, Y8 \
	VXORPS   Y9, Y9, Y9 \
	VPCMPEQW Y15, Y15, Y15 \
	VPSRLW   $15, Y15, Y15

#define X4BODY \
	VPABSB  Y2, Y3 \
	X4TOKEN(R8, R12, Y6) \
	X4TOKEN(R9, R13, Y7) \
	X4TOKEN(R10, BX, Y8) \
	X4TOKEN(R11, DX, Y9)

// HSUMTO reduces the float lanes of y (scratch X1) and stores to m.
#define HSUMTO(y, x, m) \
	VEXTRACTF128 $1, y, X1 \
	VADDPS       X1, x, x \
	VHADDPS      x, x, x \
	VHADDPS      x, x, x \
	VMOVSS       x, m

#define X4EPILOGUE \
	MOVQ out+32(FP), DI \
	HSUMTO(Y6, X6, 0(DI)) \
	HSUMTO(Y7, X7, 4(DI)) \
	HSUMTO(Y8, X8, 8(DI)) \
	HSUMTO(Y9, X9, 12(DI)) \
	VZEROUPPER

// func dotQ8_0x4AVX2(w *byte, x *[4]*int8, d *[4]*float32, nb int, out *[4]float32)
TEXT ·dotQ8_0x4AVX2(SB), NOSPLIT, $0-40
	X4PROLOGUE
	TESTQ CX, CX
	JEQ   q8x4done

q8x4loop:
	MOVWLZX   (SI), AX
	VMOVD     AX, X1
	VCVTPH2PS X1, X1
	VMOVDQU   2(SI), Y2
	X4BODY
	ADDQ      $34, SI
	DECQ      CX
	JNZ       q8x4loop

q8x4done:
	X4EPILOGUE
	RET

// func dotQ4_0x4AVX2(w *byte, x *[4]*int8, d *[4]*float32, nb int, out *[4]float32)
TEXT ·dotQ4_0x4AVX2(SB), NOSPLIT, $0-40
	X4PROLOGUE
	MOVL         $0x0f0f0f0f, AX
	VMOVD        AX, X14
	VPBROADCASTD X14, Y14
	MOVL         $0x08080808, AX
	VMOVD        AX, X13
	VPBROADCASTD X13, Y13
	TESTQ        CX, CX
	JEQ          q4x4done

q4x4loop:
	MOVWLZX   (SI), AX
	VMOVD     AX, X1
	VCVTPH2PS X1, X1
	Q4WEIGHTS(2(SI), Y2, X2, X5)
	X4BODY
	ADDQ      $18, SI
	DECQ      CX
	JNZ       q4x4loop

q4x4done:
	X4EPILOGUE
	RET
