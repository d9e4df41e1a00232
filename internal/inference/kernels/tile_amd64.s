//go:build !purego

#include "textflag.h"

// Register-tiled Q8_0 and Q4_0 kernels: one call multiplies one or two
// weight rows by one or four tokens over nb blocks. The four-token variants
// read activations packed per block (token t of block b at 128·b + 32·t,
// its scale at 16·b + 4·t); the one-token variants read the plain layout
// (32·b, 4·b). Each loaded weight block serves every token and each loaded
// activation block serves both rows.
//
// Every (row, token) result is computed by the same instruction sequence in
// every variant — one float accumulator, per block acc += (float(Σ)·dx)·dw,
// then the same horizontal sum — so a token's result does not depend on how
// many other tokens share the call (batched decode equals single decode bit
// for bit).
//
// Registers: SI weight row 0, BX row stride (row 1 at (SI)(BX*1)), R8 x,
// R9 activation scales, R10 Q4_0 offset corrections, CX blocks left.
// Y0–Y3 row 0 accumulators, Y4–Y7 row 1, Y8/Y9 row 0/1 weights (|w| for
// Q8_0, the unsigned nibbles for Q4_0), Y14/Y10 row 0/1 scale broadcasts,
// Y11 activation scale, Y12 activation, Y13 scratch, Y15 int16 ones.

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

// SCALE broadcasts the f16 weight scale at m as a float into y.
#define SCALE(m, x, y) \
	MOVWLZX      m, AX \
	VMOVD        AX, x \
	VCVTPH2PS    x, x \
	VBROADCASTSS x, y

// HSUM8 reduces the float lanes of y and stores them at m (Y13 scratch).
#define HSUM8(y, x, m) \
	VEXTRACTF128 $1, y, X13 \
	VADDPS       X13, x, x \
	VHADDPS      x, x, x \
	VHADDPS      x, x, x \
	VMOVSS       x, m

// Q8PROD adds one Q8_0 block product to acc: the sign of w (in memory at
// ws) moves onto x (Y12) so that VPMADDUBSW can take |w| (wa) as its
// unsigned operand, as ggml does.
#define Q8PROD(ws, wa, dw, acc) \
	VPSIGNB     ws, Y12, Y13 \
	VPMADDUBSW  Y13, wa, Y13 \
	VPMADDWD    Y15, Y13, Y13 \
	VCVTDQ2PS   Y13, Y13 \
	VMULPS      Y11, Y13, Y13 \
	VFMADD231PS Y13, dw, acc

// Q4PROD adds one Q4_0 block product to acc: the unsigned nibbles (wu) times
// x in memory, minus the token's precomputed 8·x pair sums (at cm), is
// Σ (q−8)·x exactly.
#define Q4PROD(xm, cm, wu, dw, acc) \
	VPMADDUBSW  xm, wu, Y13 \
	VPSUBW      cm, Y13, Y13 \
	VPMADDWD    Y15, Y13, Y13 \
	VCVTDQ2PS   Y13, Y13 \
	VMULPS      Y11, Y13, Y13 \
	VFMADD231PS Y13, dw, acc

#define Q8TOKEN2(xo, do, acc0, acc1) \
	VMOVDQU      xo(R8), Y12 \
	VBROADCASTSS do(R9), Y11 \
	Q8PROD(2(SI), Y8, Y14, acc0) \
	Q8PROD(2(SI)(BX*1), Y9, Y10, acc1)

#define Q8TOKEN1(xo, do, acc0) \
	VMOVDQU      xo(R8), Y12 \
	VBROADCASTSS do(R9), Y11 \
	Q8PROD(2(SI), Y8, Y14, acc0)

#define Q4TOKEN2(xo, do, acc0, acc1) \
	VBROADCASTSS do(R9), Y11 \
	Q4PROD(xo(R8), xo(R10), Y8, Y14, acc0) \
	Q4PROD(xo(R8), xo(R10), Y9, Y10, acc1)

#define Q4TOKEN1(xo, do, acc0) \
	VBROADCASTSS do(R9), Y11 \
	Q4PROD(xo(R8), xo(R10), Y8, Y14, acc0)

// Q4NIBBLES expands the 16 bytes at m into 32 unsigned nibbles in y (low
// nibbles are values 0–15 of the block, high nibbles 16–31).
#define Q4NIBBLES(m, x, y) \
	VMOVDQU     m, x \
	VPSRLW      $4, x, X13 \
	VINSERTI128 $1, X13, y, y \
	VPAND       nibbleMask<>(SB), y, y

#define Q8ROW0 \
	SCALE((SI), X14, Y14) \
	VPABSB 2(SI), Y8

#define Q8ROW1 \
	SCALE((SI)(BX*1), X10, Y10) \
	VPABSB 2(SI)(BX*1), Y9

#define Q4ROW0 \
	SCALE((SI), X14, Y14) \
	Q4NIBBLES(2(SI), X8, Y8)

#define Q4ROW1 \
	SCALE((SI)(BX*1), X10, Y10) \
	Q4NIBBLES(2(SI)(BX*1), X9, Y9)

#define NEXT(wstep, xstep, dstep) \
	ADDQ $wstep, SI \
	ADDQ $xstep, R8 \
	ADDQ $xstep, R10 \
	ADDQ $dstep, R9 \
	DECQ CX

// func q8_0Tile2x4(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *[8]float32)
TEXT ·q8_0Tile2x4(SB), NOSPLIT, $0-56
	ARGS
	ZERO8
	TESTQ CX, CX
	JEQ   q8t24done

q8t24loop:
	Q8ROW0
	Q8ROW1
	Q8TOKEN2(0, 0, Y0, Y4)
	Q8TOKEN2(32, 4, Y1, Y5)
	Q8TOKEN2(64, 8, Y2, Y6)
	Q8TOKEN2(96, 12, Y3, Y7)
	NEXT(34, 128, 16)
	JNZ q8t24loop

q8t24done:
	HSUM8(Y0, X0, 0(DI))
	HSUM8(Y1, X1, 4(DI))
	HSUM8(Y2, X2, 8(DI))
	HSUM8(Y3, X3, 12(DI))
	HSUM8(Y4, X4, 16(DI))
	HSUM8(Y5, X5, 20(DI))
	HSUM8(Y6, X6, 24(DI))
	HSUM8(Y7, X7, 28(DI))
	VZEROUPPER
	RET

// func q8_0Tile1x4(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *[8]float32)
TEXT ·q8_0Tile1x4(SB), NOSPLIT, $0-56
	ARGS
	ZERO8
	TESTQ CX, CX
	JEQ   q8t14done

q8t14loop:
	Q8ROW0
	Q8TOKEN1(0, 0, Y0)
	Q8TOKEN1(32, 4, Y1)
	Q8TOKEN1(64, 8, Y2)
	Q8TOKEN1(96, 12, Y3)
	NEXT(34, 128, 16)
	JNZ q8t14loop

q8t14done:
	HSUM8(Y0, X0, 0(DI))
	HSUM8(Y1, X1, 4(DI))
	HSUM8(Y2, X2, 8(DI))
	HSUM8(Y3, X3, 12(DI))
	VZEROUPPER
	RET

// func q8_0Tile2x1(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *[8]float32)
TEXT ·q8_0Tile2x1(SB), NOSPLIT, $0-56
	ARGS
	ZERO8
	TESTQ CX, CX
	JEQ   q8t21done

q8t21loop:
	Q8ROW0
	Q8ROW1
	Q8TOKEN2(0, 0, Y0, Y4)
	NEXT(34, 32, 4)
	JNZ q8t21loop

q8t21done:
	HSUM8(Y0, X0, 0(DI))
	HSUM8(Y4, X4, 4(DI))
	VZEROUPPER
	RET

// func q8_0Tile1x1(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *[8]float32)
TEXT ·q8_0Tile1x1(SB), NOSPLIT, $0-56
	ARGS
	ZERO8
	TESTQ CX, CX
	JEQ   q8t11done

q8t11loop:
	Q8ROW0
	Q8TOKEN1(0, 0, Y0)
	NEXT(34, 32, 4)
	JNZ q8t11loop

q8t11done:
	HSUM8(Y0, X0, 0(DI))
	VZEROUPPER
	RET

// func q4_0Tile2x4(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *[8]float32)
TEXT ·q4_0Tile2x4(SB), NOSPLIT, $0-56
	ARGS
	ZERO8
	TESTQ CX, CX
	JEQ   q4t24done

q4t24loop:
	Q4ROW0
	Q4ROW1
	Q4TOKEN2(0, 0, Y0, Y4)
	Q4TOKEN2(32, 4, Y1, Y5)
	Q4TOKEN2(64, 8, Y2, Y6)
	Q4TOKEN2(96, 12, Y3, Y7)
	NEXT(18, 128, 16)
	JNZ q4t24loop

q4t24done:
	HSUM8(Y0, X0, 0(DI))
	HSUM8(Y1, X1, 4(DI))
	HSUM8(Y2, X2, 8(DI))
	HSUM8(Y3, X3, 12(DI))
	HSUM8(Y4, X4, 16(DI))
	HSUM8(Y5, X5, 20(DI))
	HSUM8(Y6, X6, 24(DI))
	HSUM8(Y7, X7, 28(DI))
	VZEROUPPER
	RET

// func q4_0Tile1x4(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *[8]float32)
TEXT ·q4_0Tile1x4(SB), NOSPLIT, $0-56
	ARGS
	ZERO8
	TESTQ CX, CX
	JEQ   q4t14done

q4t14loop:
	Q4ROW0
	Q4TOKEN1(0, 0, Y0)
	Q4TOKEN1(32, 4, Y1)
	Q4TOKEN1(64, 8, Y2)
	Q4TOKEN1(96, 12, Y3)
	NEXT(18, 128, 16)
	JNZ q4t14loop

q4t14done:
	HSUM8(Y0, X0, 0(DI))
	HSUM8(Y1, X1, 4(DI))
	HSUM8(Y2, X2, 8(DI))
	HSUM8(Y3, X3, 12(DI))
	VZEROUPPER
	RET

// func q4_0Tile2x1(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *[8]float32)
TEXT ·q4_0Tile2x1(SB), NOSPLIT, $0-56
	ARGS
	ZERO8
	TESTQ CX, CX
	JEQ   q4t21done

q4t21loop:
	Q4ROW0
	Q4ROW1
	Q4TOKEN2(0, 0, Y0, Y4)
	NEXT(18, 32, 4)
	JNZ q4t21loop

q4t21done:
	HSUM8(Y0, X0, 0(DI))
	HSUM8(Y4, X4, 4(DI))
	VZEROUPPER
	RET

// func q4_0Tile1x1(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *[8]float32)
TEXT ·q4_0Tile1x1(SB), NOSPLIT, $0-56
	ARGS
	ZERO8
	TESTQ CX, CX
	JEQ   q4t11done

q4t11loop:
	Q4ROW0
	Q4TOKEN1(0, 0, Y0)
	NEXT(18, 32, 4)
	JNZ q4t11loop

q4t11done:
	HSUM8(Y0, X0, 0(DI))
	VZEROUPPER
	RET
