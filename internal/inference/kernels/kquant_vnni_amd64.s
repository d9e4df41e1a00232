//go:build !purego

#include "textflag.h"

// The Q4_K and Q6_K block kernels of dot_amd64.s and kquant4_amd64.s for
// CPUs with AVX-512 VNNI: each scaled sub-block product VPMADDWD then
// VPADDD becomes one VPDPWSSD, which multiplies the int16 pair sums by the
// scales and adds them to the int32 accumulator in one instruction. The
// integer sums are exact on both paths (no product or pair sum overflows),
// so the results equal the AVX2 kernels' bit for bit. Only the changed
// macros differ from those files.

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
	VPDPWSSD   Y6, Y8, acc \
	VPDPWSSD   Y7, Y9, acc

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

// func q4KBlockX4VNNI(qs *byte, x *[4]*int8, sc *[8]int16, out *[4]int32)
TEXT ·q4KBlockX4VNNI(SB), NOSPLIT, $0-32
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
	VPDPWSSD   Y6, Y13, acc \
	VPMADDUBSW (xo+32)(xr), Y2, Y13 \
	VPDPWSSD   Y7, Y13, acc \
	VPMADDUBSW (xo+64)(xr), Y4, Y13 \
	VPDPWSSD   Y8, Y13, acc \
	VPMADDUBSW (xo+96)(xr), Y5, Y13 \
	VPDPWSSD   Y9, Y13, acc

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

// func q6KBlockX4VNNI(blk *byte, x *[4]*int8, out *[4]int32)
TEXT ·q6KBlockX4VNNI(SB), NOSPLIT, $0-24
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

// Q4KPAIR handles 32 nibble bytes at qm: low nibbles × x at x1 with scale
// s1, high nibbles × x at x2 with scale s2 (int16 scales in memory),
// accumulating int32 lanes into a1 and a2. Y14 holds 0x0F bytes.
#define Q4KPAIR(qm, x1, x2, s1, s2, a1, a2) \
	VMOVDQU      qm, Y1 \
	VPSRLW       $4, Y1, Y2 \
	VPAND        Y14, Y1, Y1 \
	VPAND        Y14, Y2, Y2 \
	VMOVDQU      x1, Y3 \
	VMOVDQU      x2, Y4 \
	VPMADDUBSW   Y3, Y1, Y1 \
	VPMADDUBSW   Y4, Y2, Y2 \
	VPBROADCASTW s1, Y5 \
	VPBROADCASTW s2, Y6 \
	VPDPWSSD     Y5, Y1, a1 \
	VPDPWSSD     Y6, Y2, a2

// ACC4 adds the accumulators Y7, Y11 and Y12 to Y0: the one-token
// kernels spread their VPDPWSSD over four accumulators, as each waits for
// the previous one on the same register.
#define ACC4 \
	VPADDD Y7, Y0, Y0 \
	VPADDD Y12, Y11, Y11 \
	VPADDD Y11, Y0, Y0

// HSUMD reduces the eight int32 lanes of Y0 into AX.
#define HSUMD \
	VEXTRACTI128 $1, Y0, X1 \
	VPADDD       X1, X0, X0 \
	VPHADDD      X0, X0, X0 \
	VPHADDD      X0, X0, X0 \
	VMOVD        X0, AX

// func q4KBlockVNNI(qs *byte, x *int8, sc *[8]int16) int32
TEXT ·q4KBlockVNNI(SB), NOSPLIT, $0-28
	MOVQ         qs+0(FP), SI
	MOVQ         x+8(FP), DI
	MOVQ         sc+16(FP), DX
	VPXOR        Y0, Y0, Y0
	VPXOR        Y7, Y7, Y7
	VPXOR        Y11, Y11, Y11
	VPXOR        Y12, Y12, Y12
	MOVL         $0x0f0f0f0f, AX
	VMOVD        AX, X14
	VPBROADCASTD X14, Y14
	Q4KPAIR((SI), (DI), 32(DI), (DX), 2(DX), Y0, Y7)
	Q4KPAIR(32(SI), 64(DI), 96(DI), 4(DX), 6(DX), Y11, Y12)
	Q4KPAIR(64(SI), 128(DI), 160(DI), 8(DX), 10(DX), Y0, Y7)
	Q4KPAIR(96(SI), 192(DI), 224(DI), 12(DX), 14(DX), Y11, Y12)
	ACC4
	HSUMD
	VZEROUPPER
	MOVL         AX, ret+24(FP)
	RET

// Q6KCHUNK multiplies the 32 6-bit weights in q (0..63) by x at xm; the
// low 16 products take the int8 scale at s, the high 16 the one at s+1;
// the sum goes to acc.
#define Q6KCHUNK(q, xm, s, s1, acc) \
	VMOVDQU      xm, Y8 \
	VPMADDUBSW   Y8, q, q \
	MOVBLSX      s, AX \
	MOVBLSX      s1, BX \
	VMOVD        AX, X9 \
	VMOVD        BX, X10 \
	VPBROADCASTW X9, X9 \
	VPBROADCASTW X10, X10 \
	VINSERTI128  $1, X10, Y9, Y9 \
	VPDPWSSD     Y9, q, acc

// Q6KHALF handles one 128-value half: ql at SI, qh at DX, scales at R8,
// x at DI. Y14 = 0x0F bytes, Y13 = 0x03 bytes.
#define Q6KHALF \
	VMOVDQU (SI), Y1 \
	VMOVDQU 32(SI), Y2 \
	VMOVDQU (DX), Y3 \
	VPSRLW  $4, Y1, Y4 \
	VPSRLW  $4, Y2, Y5 \
	VPAND   Y14, Y1, Y1 \
	VPAND   Y14, Y2, Y2 \
	VPAND   Y14, Y4, Y4 \
	VPAND   Y14, Y5, Y5 \
	VPAND   Y13, Y3, Y6 \
	VPSLLW  $4, Y6, Y6 \
	VPOR    Y6, Y1, Y1 \
	VPSRLW  $2, Y3, Y6 \
	VPAND   Y13, Y6, Y6 \
	VPSLLW  $4, Y6, Y6 \
	VPOR    Y6, Y2, Y2 \
	VPSRLW  $4, Y3, Y6 \
	VPAND   Y13, Y6, Y6 \
	VPSLLW  $4, Y6, Y6 \
	VPOR    Y6, Y4, Y4 \
	VPSRLW  $6, Y3, Y6 \
	VPAND   Y13, Y6, Y6 \
	VPSLLW  $4, Y6, Y6 \
	VPOR    Y6, Y5, Y5 \
	Q6KCHUNK(Y1, (DI), (R8), 1(R8), Y0) \
	Q6KCHUNK(Y2, 32(DI), 2(R8), 3(R8), Y7) \
	Q6KCHUNK(Y4, 64(DI), 4(R8), 5(R8), Y11) \
	Q6KCHUNK(Y5, 96(DI), 6(R8), 7(R8), Y12)

// func q6KBlockVNNI(blk *byte, x *int8) int32
TEXT ·q6KBlockVNNI(SB), NOSPLIT, $0-20
	MOVQ         blk+0(FP), SI
	MOVQ         x+8(FP), DI
	LEAQ         128(SI), DX
	LEAQ         192(SI), R8
	VPXOR        Y0, Y0, Y0
	VPXOR        Y7, Y7, Y7
	VPXOR        Y11, Y11, Y11
	VPXOR        Y12, Y12, Y12
	MOVL         $0x0f0f0f0f, AX
	VMOVD        AX, X14
	VPBROADCASTD X14, Y14
	MOVL         $0x03030303, AX
	VMOVD        AX, X13
	VPBROADCASTD X13, Y13
	Q6KHALF
	ADDQ         $64, SI
	ADDQ         $32, DX
	ADDQ         $8, R8
	ADDQ         $128, DI
	Q6KHALF
	ACC4
	HSUMD
	VZEROUPPER
	MOVL         AX, ret+16(FP)
	RET

