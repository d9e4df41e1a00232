//go:build !purego

#include "textflag.h"

// Register-tiled Q8_0 and Q4_0 kernels: one call multiplies one or two
// weight rows by one or four tokens over nb blocks. The four-token variants
// read activations packed per block (token t of block b at 128·b + 32·t,
// its scale at 16·b + 4·t); the one-token variants read the plain layout
// (32·b, 4·b). Each loaded weight block serves every token and each loaded
// activation block serves both rows.
//
// Every (row, token) result is computed by the same arithmetic in every
// variant — one float accumulator, per block acc += float(Σ)·(dw·dx), then
// the same horizontal sum — so a token's result does not depend on how many
// other tokens share the call (batched decode equals single decode bit for
// bit).
//
// The four-token variants multiply the block's two weight scales by the four
// activation scales with two vector multiplies into an 8-float stack scratch,
// from which each product is broadcast by a load, which keeps the per-product
// work to five vector instructions (sign, two multiply-adds, convert, FMA).
//
// Registers: SI weight row 0, BX row stride (row 1 at (SI)(BX*1)), R8 x,
// R9 activation scales, R10 Q4_0 offset corrections, CX blocks left.
// Y0–Y3 row 0 accumulators, Y4–Y7 row 1, Y8/Y9 row 0/1 weights (|w| for
// Q8_0, the unsigned nibbles for Q4_0), Y12 activation, Y15 int16 ones;
// Y10, Y11, Y13, Y14 scales and scratch.

DATA nibbleMask<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nibbleMask<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nibbleMask<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nibbleMask<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL nibbleMask<>(SB), RODATA|NOPTR, $32

#define ZERO8 \
	VXORPS   Y0, Y0, Y0 \
	VXORPS   Y1, Y1, Y1 \
	VXORPS   Y2, Y2, Y2 \
	VXORPS   Y3, Y3, Y3 \
	VXORPS   Y4, Y4, Y4 \
	VXORPS   Y5, Y5, Y5 \
	VXORPS   Y6, Y6, Y6 \
	VXORPS   Y7, Y7, Y7 \
	VPCMPEQW Y15, Y15, Y15 \
	VPSRLW   $15, Y15, Y15

#define ARGS \
	MOVQ w+0(FP), SI \
	MOVQ stride+8(FP), BX \
	MOVQ x+16(FP), R8 \
	MOVQ d+24(FP), R9 \
	MOVQ c+32(FP), R10 \
	MOVQ nb+40(FP), CX \
	MOVQ out+48(FP), DI

// SCALES4 stores the f16 weight scale at wm times the four activation
// scales in X11 at o(SP).
#define SCALES4(wm, o) \
	MOVWLZX      wm, AX \
	VMOVD        AX, X13 \
	VCVTPH2PS    X13, X13 \
	VBROADCASTSS X13, X13 \
	VMULPS       X11, X13, X13 \
	VMOVUPS      X13, o(SP)

// SCALE1 broadcasts the f16 weight scale at wm times the activation scale
// in X11 into y.
#define SCALE1(wm, y) \
	MOVWLZX      wm, AX \
	VMOVD        AX, X13 \
	VCVTPH2PS    X13, X13 \
	VMULSS       X11, X13, X13 \
	VBROADCASTSS X13, y

// HSUM8 reduces the float lanes of y and stores them at m (Y13 scratch).
#define HSUM8(y, x, m) \
	VEXTRACTF128 $1, y, X13 \
	VADDPS       X13, x, x \
	VHADDPS      x, x, x \
	VHADDPS      x, x, x \
	VMOVSS       x, m

// Q8PROD adds one Q8_0 block product scaled by s to acc: the sign of w (in
// memory at ws) moves onto x (Y12) so that VPMADDUBSW can take |w| (wa) as
// its unsigned operand, as ggml does.
#define Q8PROD(ws, wa, s, t, acc) \
	VPSIGNB     ws, Y12, t \
	VPMADDUBSW  t, wa, t \
	VPMADDWD    Y15, t, t \
	VCVTDQ2PS   t, t \
	VFMADD231PS t, s, acc

// Q4PROD adds one Q4_0 block product scaled by s to acc: the unsigned
// nibbles (wu) times x in memory, minus the token's precomputed 8·x pair
// sums (at cm), is Σ (q−8)·x exactly.
#define Q4PROD(xm, cm, wu, s, t, acc) \
	VPMADDUBSW  xm, wu, t \
	VPSUBW      cm, t, t \
	VPMADDWD    Y15, t, t \
	VCVTDQ2PS   t, t \
	VFMADD231PS t, s, acc

// Q4NIBBLES expands the 16 bytes at m into 32 unsigned nibbles in y (low
// nibbles are values 0–15 of the block, high nibbles 16–31).
#define Q4NIBBLES(m, x, y) \
	VMOVDQU     m, x \
	VPSRLW      $4, x, X13 \
	VINSERTI128 $1, X13, y, y \
	VPAND       nibbleMask<>(SB), y, y

// Token k of a four-token group: row scales at 4k(SP) and 16+4k(SP).
#define Q8TOKEN2X4(k, acc0, acc1) \
	VMOVDQU      (32*k)(R8), Y12 \
	VBROADCASTSS (4*k)(SP), Y11 \
	VBROADCASTSS (16+4*k)(SP), Y14 \
	Q8PROD(2(SI), Y8, Y11, Y13, acc0) \
	Q8PROD(2(SI)(BX*1), Y9, Y14, Y10, acc1)

#define Q8TOKEN1X4(k, acc0) \
	VMOVDQU      (32*k)(R8), Y12 \
	VBROADCASTSS (4*k)(SP), Y11 \
	Q8PROD(2(SI), Y8, Y11, Y13, acc0)

#define Q4TOKEN2X4(k, acc0, acc1) \
	VBROADCASTSS (4*k)(SP), Y11 \
	VBROADCASTSS (16+4*k)(SP), Y14 \
	Q4PROD((32*k)(R8), (32*k)(R10), Y8, Y11, Y13, acc0) \
	Q4PROD((32*k)(R8), (32*k)(R10), Y9, Y14, Y10, acc1)

#define Q4TOKEN1X4(k, acc0) \
	VBROADCASTSS (4*k)(SP), Y11 \
	Q4PROD((32*k)(R8), (32*k)(R10), Y8, Y11, Y13, acc0)

#define NEXT(wstep, xstep, dstep) \
	ADDQ $wstep, SI \
	ADDQ $xstep, R8 \
	ADDQ $xstep, R10 \
	ADDQ $dstep, R9 \
	DECQ CX

#define OUT2X4 \
	HSUM8(Y0, X0, 0(DI)) \
	HSUM8(Y1, X1, 4(DI)) \
	HSUM8(Y2, X2, 8(DI)) \
	HSUM8(Y3, X3, 12(DI)) \
	HSUM8(Y4, X4, 16(DI)) \
	HSUM8(Y5, X5, 20(DI)) \
	HSUM8(Y6, X6, 24(DI)) \
	HSUM8(Y7, X7, 28(DI)) \
	VZEROUPPER

#define OUT1X4 \
	HSUM8(Y0, X0, 0(DI)) \
	HSUM8(Y1, X1, 4(DI)) \
	HSUM8(Y2, X2, 8(DI)) \
	HSUM8(Y3, X3, 12(DI)) \
	VZEROUPPER

#define OUT2X1 \
	HSUM8(Y0, X0, 0(DI)) \
	HSUM8(Y4, X4, 4(DI)) \
	VZEROUPPER

#define OUT1X1 \
	HSUM8(Y0, X0, 0(DI)) \
	VZEROUPPER

// func q8_0Tile2x4(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *[8]float32)
TEXT ·q8_0Tile2x4(SB), NOSPLIT, $32-56
	ARGS
	ZERO8
	TESTQ CX, CX
	JEQ   q8t24done

q8t24loop:
	VMOVUPS (R9), X11
	SCALES4((SI), 0)
	SCALES4((SI)(BX*1), 16)
	VPABSB  2(SI), Y8
	VPABSB  2(SI)(BX*1), Y9
	Q8TOKEN2X4(0, Y0, Y4)
	Q8TOKEN2X4(1, Y1, Y5)
	Q8TOKEN2X4(2, Y2, Y6)
	Q8TOKEN2X4(3, Y3, Y7)
	NEXT(34, 128, 16)
	JNZ     q8t24loop

q8t24done:
	OUT2X4
	RET

// func q8_0Tile1x4(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *[8]float32)
TEXT ·q8_0Tile1x4(SB), NOSPLIT, $32-56
	ARGS
	ZERO8
	TESTQ CX, CX
	JEQ   q8t14done

q8t14loop:
	VMOVUPS (R9), X11
	SCALES4((SI), 0)
	VPABSB  2(SI), Y8
	Q8TOKEN1X4(0, Y0)
	Q8TOKEN1X4(1, Y1)
	Q8TOKEN1X4(2, Y2)
	Q8TOKEN1X4(3, Y3)
	NEXT(34, 128, 16)
	JNZ     q8t14loop

q8t14done:
	OUT1X4
	RET

// func q8_0Tile2x1(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *[8]float32)
TEXT ·q8_0Tile2x1(SB), NOSPLIT, $0-56
	ARGS
	ZERO8
	TESTQ CX, CX
	JEQ   q8t21done

q8t21loop:
	VMOVSS  (R9), X11
	SCALE1((SI), Y14)
	SCALE1((SI)(BX*1), Y10)
	VPABSB  2(SI), Y8
	VPABSB  2(SI)(BX*1), Y9
	VMOVDQU (R8), Y12
	Q8PROD(2(SI), Y8, Y14, Y13, Y0)
	Q8PROD(2(SI)(BX*1), Y9, Y10, Y11, Y4)
	NEXT(34, 32, 4)
	JNZ     q8t21loop

q8t21done:
	OUT2X1
	RET

// func q8_0Tile1x1(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *[8]float32)
TEXT ·q8_0Tile1x1(SB), NOSPLIT, $0-56
	ARGS
	ZERO8
	TESTQ CX, CX
	JEQ   q8t11done

q8t11loop:
	VMOVSS  (R9), X11
	SCALE1((SI), Y14)
	VPABSB  2(SI), Y8
	VMOVDQU (R8), Y12
	Q8PROD(2(SI), Y8, Y14, Y13, Y0)
	NEXT(34, 32, 4)
	JNZ     q8t11loop

q8t11done:
	OUT1X1
	RET

// func q4_0Tile2x4(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *[8]float32)
TEXT ·q4_0Tile2x4(SB), NOSPLIT, $32-56
	ARGS
	ZERO8
	TESTQ CX, CX
	JEQ   q4t24done

q4t24loop:
	VMOVUPS (R9), X11
	SCALES4((SI), 0)
	SCALES4((SI)(BX*1), 16)
	Q4NIBBLES(2(SI), X8, Y8)
	Q4NIBBLES(2(SI)(BX*1), X9, Y9)
	Q4TOKEN2X4(0, Y0, Y4)
	Q4TOKEN2X4(1, Y1, Y5)
	Q4TOKEN2X4(2, Y2, Y6)
	Q4TOKEN2X4(3, Y3, Y7)
	NEXT(18, 128, 16)
	JNZ     q4t24loop

q4t24done:
	OUT2X4
	RET

// func q4_0Tile1x4(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *[8]float32)
TEXT ·q4_0Tile1x4(SB), NOSPLIT, $32-56
	ARGS
	ZERO8
	TESTQ CX, CX
	JEQ   q4t14done

q4t14loop:
	VMOVUPS (R9), X11
	SCALES4((SI), 0)
	Q4NIBBLES(2(SI), X8, Y8)
	Q4TOKEN1X4(0, Y0)
	Q4TOKEN1X4(1, Y1)
	Q4TOKEN1X4(2, Y2)
	Q4TOKEN1X4(3, Y3)
	NEXT(18, 128, 16)
	JNZ     q4t14loop

q4t14done:
	OUT1X4
	RET

// func q4_0Tile2x1(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *[8]float32)
TEXT ·q4_0Tile2x1(SB), NOSPLIT, $0-56
	ARGS
	ZERO8
	TESTQ CX, CX
	JEQ   q4t21done

q4t21loop:
	VMOVSS  (R9), X11
	SCALE1((SI), Y14)
	SCALE1((SI)(BX*1), Y10)
	Q4NIBBLES(2(SI), X8, Y8)
	Q4NIBBLES(2(SI)(BX*1), X9, Y9)
	Q4PROD((R8), (R10), Y8, Y14, Y13, Y0)
	Q4PROD((R8), (R10), Y9, Y10, Y11, Y4)
	NEXT(18, 32, 4)
	JNZ     q4t21loop

q4t21done:
	OUT2X1
	RET

// func q4_0Tile1x1(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *[8]float32)
TEXT ·q4_0Tile1x1(SB), NOSPLIT, $0-56
	ARGS
	ZERO8
	TESTQ CX, CX
	JEQ   q4t11done

q4t11loop:
	VMOVSS  (R9), X11
	SCALE1((SI), Y14)
	Q4NIBBLES(2(SI), X8, Y8)
	Q4PROD((R8), (R10), Y8, Y14, Y13, Y0)
	NEXT(18, 32, 4)
	JNZ     q4t11loop

q4t11done:
	OUT1X1
	RET
