//go:build !purego

#include "textflag.h"

// Four-token Q4_K and Q6_K block kernels: the weights of one 256-value block
// are unpacked once and multiplied by the int8 activations of four tokens
// (x pointers in R8–R11). The results are the same exact integer sums the
// one-token kernels (q4KBlockAVX2, q6KBlockAVX2) return, so a token's
// product does not depend on the batch it is computed in.

DATA kqLow4<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA kqLow4<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA kqLow4<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA kqLow4<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL kqLow4<>(SB), RODATA|NOPTR, $32

DATA kqLow2<>+0(SB)/8, $0x0303030303030303
DATA kqLow2<>+8(SB)/8, $0x0303030303030303
DATA kqLow2<>+16(SB)/8, $0x0303030303030303
DATA kqLow2<>+24(SB)/8, $0x0303030303030303
GLOBL kqLow2<>(SB), RODATA|NOPTR, $32

#define X4POINTERS \
	MOVQ x+8(FP), AX \
	MOVQ 0(AX), R8 \
	MOVQ 8(AX), R9 \
	MOVQ 16(AX), R10 \
	MOVQ 24(AX), R11

// HSUMDTO reduces the int32 lanes of y (X13 scratch) and stores them at m.
#define HSUMDTO(y, x, m) \
	VEXTRACTI128 $1, y, X13 \
	VPADDD       X13, x, x \
	VPHADDD      x, x, x \
	VPHADDD      x, x, x \
	VMOVD        x, m

// Q4KTOKEN adds token xr's products with the low nibbles (Y4, scale Y6) and
// the high nibbles (Y5, scale Y7) of 32-byte chunk c to acc.
#define Q4KTOKEN(xr, c, acc) \
	VPMADDUBSW (64*c)(xr), Y4, Y8 \
	VPMADDUBSW (64*c+32)(xr), Y5, Y9 \
	VPMADDWD   Y6, Y8, Y8 \
	VPMADDWD   Y7, Y9, Y9 \
	VPADDD     Y8, acc, acc \
	VPADDD     Y9, acc, acc

#define Q4KCHUNK(c) \
	VMOVDQU      (32*c)(SI), Y4 \
	VPSRLW       $4, Y4, Y5 \
	VPAND        kqLow4<>(SB), Y4, Y4 \
	VPAND        kqLow4<>(SB), Y5, Y5 \
	VPBROADCASTW (4*c)(DX), Y6 \
	VPBROADCASTW (4*c+2)(DX), Y7 \
	Q4KTOKEN(R8, c, Y0) \
	Q4KTOKEN(R9, c, Y1) \
	Q4KTOKEN(R10, c, Y2) \
	Q4KTOKEN(R11, c, Y3)

// func q4KBlockX4AVX2(qs *byte, x *[4]*int8, sc *[8]int16, out *[4]int32)
TEXT ·q4KBlockX4AVX2(SB), NOSPLIT, $0-32
	MOVQ  qs+0(FP), SI
	X4POINTERS
	MOVQ  sc+16(FP), DX
	MOVQ  out+24(FP), DI
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	Q4KCHUNK(0)
	Q4KCHUNK(1)
	Q4KCHUNK(2)
	Q4KCHUNK(3)
	HSUMDTO(Y0, X0, 0(DI))
	HSUMDTO(Y1, X1, 4(DI))
	HSUMDTO(Y2, X2, 8(DI))
	HSUMDTO(Y3, X3, 12(DI))
	VZEROUPPER
	RET

// Q6KSCALES builds in y the int16 scale vector of one 32-value chunk: the
// int8 scale at s for the low 16 values, the one at s1 for the high 16.
#define Q6KSCALES(s, s1, x, y) \
	MOVBLSX      s, AX \
	MOVBLSX      s1, BX \
	VMOVD        AX, x \
	VMOVD        BX, X13 \
	VPBROADCASTW x, x \
	VPBROADCASTW X13, X13 \
	VINSERTI128  $1, X13, y, y

// Q6KTOKEN adds token xr's products with the four expanded chunks of the
// current half (Y1, Y2, Y4, Y5; scales Y6–Y9) to acc; xo is the half's
// offset into x.
#define Q6KTOKEN(xr, xo, acc) \
	VPMADDUBSW (xo)(xr), Y1, Y13 \
	VPMADDWD   Y6, Y13, Y13 \
	VPADDD     Y13, acc, acc \
	VPMADDUBSW (xo+32)(xr), Y2, Y13 \
	VPMADDWD   Y7, Y13, Y13 \
	VPADDD     Y13, acc, acc \
	VPMADDUBSW (xo+64)(xr), Y4, Y13 \
	VPMADDWD   Y8, Y13, Y13 \
	VPADDD     Y13, acc, acc \
	VPMADDUBSW (xo+96)(xr), Y5, Y13 \
	VPMADDWD   Y9, Y13, Y13 \
	VPADDD     Y13, acc, acc

// Q6KHALFX4 expands one 128-value half (ql at SI, qh at DX, scales at CX)
// into 6-bit values 0..63 and multiplies them with the four tokens.
#define Q6KHALFX4(xo) \
	VMOVDQU (SI), Y1 \
	VMOVDQU 32(SI), Y2 \
	VMOVDQU (DX), Y3 \
	VPSRLW  $4, Y1, Y4 \
	VPSRLW  $4, Y2, Y5 \
	VPAND   Y14, Y1, Y1 \
	VPAND   Y14, Y2, Y2 \
	VPAND   Y14, Y4, Y4 \
	VPAND   Y14, Y5, Y5 \
	VPAND   Y15, Y3, Y6 \
	VPSLLW  $4, Y6, Y6 \
	VPOR    Y6, Y1, Y1 \
	VPSRLW  $2, Y3, Y6 \
	VPAND   Y15, Y6, Y6 \
	VPSLLW  $4, Y6, Y6 \
	VPOR    Y6, Y2, Y2 \
	VPSRLW  $4, Y3, Y6 \
	VPAND   Y15, Y6, Y6 \
	VPSLLW  $4, Y6, Y6 \
	VPOR    Y6, Y4, Y4 \
	VPSRLW  $6, Y3, Y6 \
	VPAND   Y15, Y6, Y6 \
	VPSLLW  $4, Y6, Y6 \
	VPOR    Y6, Y5, Y5 \
	Q6KSCALES((CX), 1(CX), X6, Y6) \
	Q6KSCALES(2(CX), 3(CX), X7, Y7) \
	Q6KSCALES(4(CX), 5(CX), X8, Y8) \
	Q6KSCALES(6(CX), 7(CX), X9, Y9) \
	Q6KTOKEN(R8, xo, Y0) \
	Q6KTOKEN(R9, xo, Y10) \
	Q6KTOKEN(R10, xo, Y11) \
	Q6KTOKEN(R11, xo, Y12)

// func q6KBlockX4AVX2(blk *byte, x *[4]*int8, out *[4]int32)
TEXT ·q6KBlockX4AVX2(SB), NOSPLIT, $0-24
	MOVQ    blk+0(FP), SI
	X4POINTERS
	MOVQ    out+16(FP), DI
	LEAQ    128(SI), DX
	LEAQ    192(SI), CX
	VPXOR   Y0, Y0, Y0
	VPXOR   Y10, Y10, Y10
	VPXOR   Y11, Y11, Y11
	VPXOR   Y12, Y12, Y12
	VMOVDQU kqLow4<>(SB), Y14
	VMOVDQU kqLow2<>(SB), Y15
	Q6KHALFX4(0)
	ADDQ    $64, SI
	ADDQ    $32, DX
	ADDQ    $8, CX
	Q6KHALFX4(128)
	HSUMDTO(Y0, X0, 0(DI))
	HSUMDTO(Y10, X10, 4(DI))
	HSUMDTO(Y11, X11, 8(DI))
	HSUMDTO(Y12, X12, 12(DI))
	VZEROUPPER
	RET
