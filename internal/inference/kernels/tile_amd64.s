//go:build !purego

#include "textflag.h"

// Register-tiled Q8_0 and Q4_0 kernels: one call multiplies one or two
// weight rows by a group of T = 1…4 tokens over nb blocks (q8_0Tile2x4 is
// two rows by four tokens). The activations of a group are packed per block:
// token k of block b at 32·T·b + 32·k, its scale at 4·T·b + 4·k (for T = 1
// the plain layout). Each loaded weight block serves every token and each
// loaded activation block serves both rows.
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
// A call covers `steps` rows (R = 1) or row pairs (R = 2) in a row, writing
// token k's value of row r at out + 4·r + k·ostride bytes, so a decode step
// makes one call per chunk of rows rather than one per row pair.
//
// Registers: SI weight row 0, BX row stride (row 1 at (SI)(BX*1)), R8 x,
// R9 activation scales, R10 Q4_0 offset corrections, CX blocks left, R11–R13
// the group's x, scale and correction pointers, R14 steps left, DI out,
// DX out stride.
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
	MOVQ x+16(FP), R11 \
	MOVQ d+24(FP), R12 \
	MOVQ c+32(FP), R13 \
	MOVQ out+48(FP), DI \
	MOVQ ostride+56(FP), DX \
	MOVQ steps+64(FP), R14

// START resets the accumulators and the activation pointers for the next
// row (pair).
#define START \
	ZERO8 \
	MOVQ R11, R8 \
	MOVQ R12, R9 \
	MOVQ R13, R10 \
	MOVQ nb+40(FP), CX

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

// PREFETCH2 asks for both weight rows 320 bytes (about nine Q8_0 blocks)
// ahead. The multi-token kernels run on the first token group while the
// weights stream from memory as two interleaved rows, which the hardware
// prefetcher follows poorly: with it a 10-token 135M decode step's products
// ran 1.13–1.17× as fast (192 bytes ahead 1.11×, 512 bytes 1.07×). A
// prefetch never faults, so reading past a matrix's end is harmless, and it
// changes no arithmetic.
#define PREFETCH2 \
	PREFETCHT0 320(SI) \
	PREFETCHT0 320(SI)(BX*1)

// OUT stores an accumulator's sum at m.
#define OUT(y, x, m) HSUM8(y, x, m)

// func q8_0Tile2x4(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q8_0Tile2x4(SB), NOSPLIT, $32-72
	ARGS

q80t24row:
	START
	TESTQ CX, CX
	JEQ   q80t24done

q80t24loop:
	PREFETCH2
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
	JNZ     q80t24loop

q80t24done:
	LEAQ (DX)(DX*2), AX
	OUT(Y0, X0, 0(DI))
	OUT(Y1, X1, 0(DI)(DX*1))
	OUT(Y2, X2, 0(DI)(DX*2))
	OUT(Y3, X3, 0(DI)(AX*1))
	OUT(Y4, X4, 4(DI))
	OUT(Y5, X5, 4(DI)(DX*1))
	OUT(Y6, X6, 4(DI)(DX*2))
	OUT(Y7, X7, 4(DI)(AX*1))
	ADDQ BX, SI // SI is at row 1: the next pair starts a stride later
	ADDQ $8, DI
	DECQ R14
	JNZ  q80t24row
	VZEROUPPER
	RET

// func q8_0Tile2x3(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q8_0Tile2x3(SB), NOSPLIT, $32-72
	ARGS

q80t23row:
	START
	TESTQ CX, CX
	JEQ   q80t23done

q80t23loop:
	PREFETCH2
	VMOVUPS (R9), X11
	SCALES4((SI), 0)
	SCALES4((SI)(BX*1), 16)
	VPABSB  2(SI), Y8
	VPABSB  2(SI)(BX*1), Y9
	Q8TOKEN2X4(0, Y0, Y4)
	Q8TOKEN2X4(1, Y1, Y5)
	Q8TOKEN2X4(2, Y2, Y6)
	NEXT(34, 96, 12)
	JNZ     q80t23loop

q80t23done:
	OUT(Y0, X0, 0(DI))
	OUT(Y1, X1, 0(DI)(DX*1))
	OUT(Y2, X2, 0(DI)(DX*2))
	OUT(Y4, X4, 4(DI))
	OUT(Y5, X5, 4(DI)(DX*1))
	OUT(Y6, X6, 4(DI)(DX*2))
	ADDQ BX, SI // SI is at row 1: the next pair starts a stride later
	ADDQ $8, DI
	DECQ R14
	JNZ  q80t23row
	VZEROUPPER
	RET

// func q8_0Tile2x2(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q8_0Tile2x2(SB), NOSPLIT, $32-72
	ARGS

q80t22row:
	START
	TESTQ CX, CX
	JEQ   q80t22done

q80t22loop:
	PREFETCH2
	VMOVUPS (R9), X11
	SCALES4((SI), 0)
	SCALES4((SI)(BX*1), 16)
	VPABSB  2(SI), Y8
	VPABSB  2(SI)(BX*1), Y9
	Q8TOKEN2X4(0, Y0, Y4)
	Q8TOKEN2X4(1, Y1, Y5)
	NEXT(34, 64, 8)
	JNZ     q80t22loop

q80t22done:
	OUT(Y0, X0, 0(DI))
	OUT(Y1, X1, 0(DI)(DX*1))
	OUT(Y4, X4, 4(DI))
	OUT(Y5, X5, 4(DI)(DX*1))
	ADDQ BX, SI // SI is at row 1: the next pair starts a stride later
	ADDQ $8, DI
	DECQ R14
	JNZ  q80t22row
	VZEROUPPER
	RET

// func q8_0Tile2x1(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q8_0Tile2x1(SB), NOSPLIT, $0-72
	ARGS

q80t21row:
	START
	TESTQ CX, CX
	JEQ   q80t21done

q80t21loop:
	VMOVSS  (R9), X11
	SCALE1((SI), Y14)
	SCALE1((SI)(BX*1), Y10)
	VPABSB  2(SI), Y8
	VPABSB  2(SI)(BX*1), Y9
	VMOVDQU (R8), Y12
	Q8PROD(2(SI), Y8, Y14, Y13, Y0)
	Q8PROD(2(SI)(BX*1), Y9, Y10, Y11, Y4)
	NEXT(34, 32, 4)
	JNZ     q80t21loop

q80t21done:
	OUT(Y0, X0, 0(DI))
	OUT(Y4, X4, 4(DI))
	ADDQ BX, SI // SI is at row 1: the next pair starts a stride later
	ADDQ $8, DI
	DECQ R14
	JNZ  q80t21row
	VZEROUPPER
	RET

// func q8_0Tile1x4(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q8_0Tile1x4(SB), NOSPLIT, $32-72
	ARGS

q80t14row:
	START
	TESTQ CX, CX
	JEQ   q80t14done

q80t14loop:
	VMOVUPS (R9), X11
	SCALES4((SI), 0)
	VPABSB  2(SI), Y8
	Q8TOKEN1X4(0, Y0)
	Q8TOKEN1X4(1, Y1)
	Q8TOKEN1X4(2, Y2)
	Q8TOKEN1X4(3, Y3)
	NEXT(34, 128, 16)
	JNZ     q80t14loop

q80t14done:
	LEAQ (DX)(DX*2), AX
	OUT(Y0, X0, 0(DI))
	OUT(Y1, X1, 0(DI)(DX*1))
	OUT(Y2, X2, 0(DI)(DX*2))
	OUT(Y3, X3, 0(DI)(AX*1))
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  q80t14row
	VZEROUPPER
	RET

// func q8_0Tile1x3(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q8_0Tile1x3(SB), NOSPLIT, $32-72
	ARGS

q80t13row:
	START
	TESTQ CX, CX
	JEQ   q80t13done

q80t13loop:
	VMOVUPS (R9), X11
	SCALES4((SI), 0)
	VPABSB  2(SI), Y8
	Q8TOKEN1X4(0, Y0)
	Q8TOKEN1X4(1, Y1)
	Q8TOKEN1X4(2, Y2)
	NEXT(34, 96, 12)
	JNZ     q80t13loop

q80t13done:
	OUT(Y0, X0, 0(DI))
	OUT(Y1, X1, 0(DI)(DX*1))
	OUT(Y2, X2, 0(DI)(DX*2))
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  q80t13row
	VZEROUPPER
	RET

// func q8_0Tile1x2(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q8_0Tile1x2(SB), NOSPLIT, $32-72
	ARGS

q80t12row:
	START
	TESTQ CX, CX
	JEQ   q80t12done

q80t12loop:
	VMOVUPS (R9), X11
	SCALES4((SI), 0)
	VPABSB  2(SI), Y8
	Q8TOKEN1X4(0, Y0)
	Q8TOKEN1X4(1, Y1)
	NEXT(34, 64, 8)
	JNZ     q80t12loop

q80t12done:
	OUT(Y0, X0, 0(DI))
	OUT(Y1, X1, 0(DI)(DX*1))
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  q80t12row
	VZEROUPPER
	RET

// func q8_0Tile1x1(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q8_0Tile1x1(SB), NOSPLIT, $0-72
	ARGS

q80t11row:
	START
	TESTQ CX, CX
	JEQ   q80t11done

q80t11loop:
	VMOVSS  (R9), X11
	SCALE1((SI), Y14)
	VPABSB  2(SI), Y8
	VMOVDQU (R8), Y12
	Q8PROD(2(SI), Y8, Y14, Y13, Y0)
	NEXT(34, 32, 4)
	JNZ     q80t11loop

q80t11done:
	OUT(Y0, X0, 0(DI))
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  q80t11row
	VZEROUPPER
	RET

// func q4_0Tile2x4(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q4_0Tile2x4(SB), NOSPLIT, $32-72
	ARGS

q40t24row:
	START
	TESTQ CX, CX
	JEQ   q40t24done

q40t24loop:
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
	JNZ     q40t24loop

q40t24done:
	LEAQ (DX)(DX*2), AX
	OUT(Y0, X0, 0(DI))
	OUT(Y1, X1, 0(DI)(DX*1))
	OUT(Y2, X2, 0(DI)(DX*2))
	OUT(Y3, X3, 0(DI)(AX*1))
	OUT(Y4, X4, 4(DI))
	OUT(Y5, X5, 4(DI)(DX*1))
	OUT(Y6, X6, 4(DI)(DX*2))
	OUT(Y7, X7, 4(DI)(AX*1))
	ADDQ BX, SI // SI is at row 1: the next pair starts a stride later
	ADDQ $8, DI
	DECQ R14
	JNZ  q40t24row
	VZEROUPPER
	RET

// func q4_0Tile2x3(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q4_0Tile2x3(SB), NOSPLIT, $32-72
	ARGS

q40t23row:
	START
	TESTQ CX, CX
	JEQ   q40t23done

q40t23loop:
	VMOVUPS (R9), X11
	SCALES4((SI), 0)
	SCALES4((SI)(BX*1), 16)
	Q4NIBBLES(2(SI), X8, Y8)
	Q4NIBBLES(2(SI)(BX*1), X9, Y9)
	Q4TOKEN2X4(0, Y0, Y4)
	Q4TOKEN2X4(1, Y1, Y5)
	Q4TOKEN2X4(2, Y2, Y6)
	NEXT(18, 96, 12)
	JNZ     q40t23loop

q40t23done:
	OUT(Y0, X0, 0(DI))
	OUT(Y1, X1, 0(DI)(DX*1))
	OUT(Y2, X2, 0(DI)(DX*2))
	OUT(Y4, X4, 4(DI))
	OUT(Y5, X5, 4(DI)(DX*1))
	OUT(Y6, X6, 4(DI)(DX*2))
	ADDQ BX, SI // SI is at row 1: the next pair starts a stride later
	ADDQ $8, DI
	DECQ R14
	JNZ  q40t23row
	VZEROUPPER
	RET

// func q4_0Tile2x2(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q4_0Tile2x2(SB), NOSPLIT, $32-72
	ARGS

q40t22row:
	START
	TESTQ CX, CX
	JEQ   q40t22done

q40t22loop:
	VMOVUPS (R9), X11
	SCALES4((SI), 0)
	SCALES4((SI)(BX*1), 16)
	Q4NIBBLES(2(SI), X8, Y8)
	Q4NIBBLES(2(SI)(BX*1), X9, Y9)
	Q4TOKEN2X4(0, Y0, Y4)
	Q4TOKEN2X4(1, Y1, Y5)
	NEXT(18, 64, 8)
	JNZ     q40t22loop

q40t22done:
	OUT(Y0, X0, 0(DI))
	OUT(Y1, X1, 0(DI)(DX*1))
	OUT(Y4, X4, 4(DI))
	OUT(Y5, X5, 4(DI)(DX*1))
	ADDQ BX, SI // SI is at row 1: the next pair starts a stride later
	ADDQ $8, DI
	DECQ R14
	JNZ  q40t22row
	VZEROUPPER
	RET

// func q4_0Tile2x1(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q4_0Tile2x1(SB), NOSPLIT, $0-72
	ARGS

q40t21row:
	START
	TESTQ CX, CX
	JEQ   q40t21done

q40t21loop:
	VMOVSS  (R9), X11
	SCALE1((SI), Y14)
	SCALE1((SI)(BX*1), Y10)
	Q4NIBBLES(2(SI), X8, Y8)
	Q4NIBBLES(2(SI)(BX*1), X9, Y9)
	Q4PROD((R8), (R10), Y8, Y14, Y13, Y0)
	Q4PROD((R8), (R10), Y9, Y10, Y11, Y4)
	NEXT(18, 32, 4)
	JNZ     q40t21loop

q40t21done:
	OUT(Y0, X0, 0(DI))
	OUT(Y4, X4, 4(DI))
	ADDQ BX, SI // SI is at row 1: the next pair starts a stride later
	ADDQ $8, DI
	DECQ R14
	JNZ  q40t21row
	VZEROUPPER
	RET

// func q4_0Tile1x4(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q4_0Tile1x4(SB), NOSPLIT, $32-72
	ARGS

q40t14row:
	START
	TESTQ CX, CX
	JEQ   q40t14done

q40t14loop:
	VMOVUPS (R9), X11
	SCALES4((SI), 0)
	Q4NIBBLES(2(SI), X8, Y8)
	Q4TOKEN1X4(0, Y0)
	Q4TOKEN1X4(1, Y1)
	Q4TOKEN1X4(2, Y2)
	Q4TOKEN1X4(3, Y3)
	NEXT(18, 128, 16)
	JNZ     q40t14loop

q40t14done:
	LEAQ (DX)(DX*2), AX
	OUT(Y0, X0, 0(DI))
	OUT(Y1, X1, 0(DI)(DX*1))
	OUT(Y2, X2, 0(DI)(DX*2))
	OUT(Y3, X3, 0(DI)(AX*1))
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  q40t14row
	VZEROUPPER
	RET

// func q4_0Tile1x3(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q4_0Tile1x3(SB), NOSPLIT, $32-72
	ARGS

q40t13row:
	START
	TESTQ CX, CX
	JEQ   q40t13done

q40t13loop:
	VMOVUPS (R9), X11
	SCALES4((SI), 0)
	Q4NIBBLES(2(SI), X8, Y8)
	Q4TOKEN1X4(0, Y0)
	Q4TOKEN1X4(1, Y1)
	Q4TOKEN1X4(2, Y2)
	NEXT(18, 96, 12)
	JNZ     q40t13loop

q40t13done:
	OUT(Y0, X0, 0(DI))
	OUT(Y1, X1, 0(DI)(DX*1))
	OUT(Y2, X2, 0(DI)(DX*2))
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  q40t13row
	VZEROUPPER
	RET

// func q4_0Tile1x2(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q4_0Tile1x2(SB), NOSPLIT, $32-72
	ARGS

q40t12row:
	START
	TESTQ CX, CX
	JEQ   q40t12done

q40t12loop:
	VMOVUPS (R9), X11
	SCALES4((SI), 0)
	Q4NIBBLES(2(SI), X8, Y8)
	Q4TOKEN1X4(0, Y0)
	Q4TOKEN1X4(1, Y1)
	NEXT(18, 64, 8)
	JNZ     q40t12loop

q40t12done:
	OUT(Y0, X0, 0(DI))
	OUT(Y1, X1, 0(DI)(DX*1))
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  q40t12row
	VZEROUPPER
	RET

// func q4_0Tile1x1(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q4_0Tile1x1(SB), NOSPLIT, $0-72
	ARGS

q40t11row:
	START
	TESTQ CX, CX
	JEQ   q40t11done

q40t11loop:
	VMOVSS  (R9), X11
	SCALE1((SI), Y14)
	Q4NIBBLES(2(SI), X8, Y8)
	Q4PROD((R8), (R10), Y8, Y14, Y13, Y0)
	NEXT(18, 32, 4)
	JNZ     q40t11loop

q40t11done:
	OUT(Y0, X0, 0(DI))
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  q40t11row
	VZEROUPPER
	RET

// q8_0Tile2x4NoPrefetch is q8_0Tile2x4 without PREFETCH2, for
// BenchmarkTilePrefetchSideBySide.
// func q8_0Tile2x4NoPrefetch(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q8_0Tile2x4NoPrefetch(SB), NOSPLIT, $32-72
	ARGS

q80n24row:
	START
	TESTQ CX, CX
	JEQ   q80n24done

q80n24loop:
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
	JNZ     q80n24loop

q80n24done:
	LEAQ (DX)(DX*2), AX
	OUT(Y0, X0, 0(DI))
	OUT(Y1, X1, 0(DI)(DX*1))
	OUT(Y2, X2, 0(DI)(DX*2))
	OUT(Y3, X3, 0(DI)(AX*1))
	OUT(Y4, X4, 4(DI))
	OUT(Y5, X5, 4(DI)(DX*1))
	OUT(Y6, X6, 4(DI)(DX*2))
	OUT(Y7, X7, 4(DI)(AX*1))
	ADDQ BX, SI // SI is at row 1: the next pair starts a stride later
	ADDQ $8, DI
	DECQ R14
	JNZ  q80n24row
	VZEROUPPER
	RET
