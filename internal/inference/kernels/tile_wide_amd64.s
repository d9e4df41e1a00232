//go:build !purego

#include "textflag.h"

// One-row Q8_0 and Q4_0 kernels for groups of five to ten tokens (the
// packed layout of q8Tiles, T tokens per group): per block, the weight row
// is expanded once (|w| and the sign for Q8_0, the nibbles for Q4_0) and
// its scale multiplied by the group's T activation scales with one or two
// vector multiplies into a stack scratch; then each token costs one
// activation load, a scale broadcast and the five vector instructions of
// the product. A 10-token decode step is so one sequential pass over the
// weights, which the hardware prefetcher follows, with the per-block
// overhead shared by ten products. Every product is the arithmetic of
// tile_amd64.s (one float accumulator per token, acc += float(Σ)·(dw·dx)
// per block, the same horizontal sum), so results do not depend on the
// group size.
//
// Registers: SI weight row, R8 x, R9 activation scales, R10 Q4_0
// corrections, CX blocks left, R11–R13 the group's x, scale and correction
// pointers, R14 rows left, DI out, DX out stride, AX scratch.
// Y0–Y9 token accumulators, Y10 |w| (Q8_0) or the nibbles (Q4_0), Y11 w,
// Y12 activation, Y13 product, Y14 scale, Y15 int16 ones.

DATA wideNibbleMask<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA wideNibbleMask<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA wideNibbleMask<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA wideNibbleMask<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL wideNibbleMask<>(SB), RODATA|NOPTR, $32

#define WARGS \
	MOVQ w+0(FP), SI \
	MOVQ x+16(FP), R11 \
	MOVQ d+24(FP), R12 \
	MOVQ c+32(FP), R13 \
	MOVQ out+48(FP), DI \
	MOVQ ostride+56(FP), DX \
	MOVQ steps+64(FP), R14 \
	VPCMPEQW Y15, Y15, Y15 \
	VPSRLW   $15, Y15, Y15

#define WSTART \
	MOVQ R11, R8 \
	MOVQ R12, R9 \
	MOVQ R13, R10 \
	MOVQ nb+40(FP), CX

// WSCALES8 stores the row's f16 scale times the eight activation scales at
// o(R9) at o(SP).
#define WSCALES8(o) \
	VMULPS  o(R9), Y13, Y14 \
	VMOVUPS Y14, o(SP)

#define WDW \
	MOVWLZX      (SI), AX \
	VMOVD        AX, X13 \
	VCVTPH2PS    X13, X13 \
	VBROADCASTSS X13, Y13

// Q8W expands the Q8_0 block's weights: w in Y11, |w| in Y10.
#define Q8W \
	VMOVDQU 2(SI), Y11 \
	VPABSB  Y11, Y10

// Q4W expands the Q4_0 block's 16 bytes into 32 unsigned nibbles in Y10.
#define Q4W \
	VMOVDQU     2(SI), X10 \
	VPSRLW      $4, X10, X13 \
	VINSERTI128 $1, X13, Y10, Y10 \
	VPAND       wideNibbleMask<>(SB), Y10, Y10

#define Q8TOK(k, acc) \
	VMOVDQU      (32*k)(R8), Y12 \
	VPSIGNB      Y11, Y12, Y13 \
	VPMADDUBSW   Y13, Y10, Y13 \
	VPMADDWD     Y15, Y13, Y13 \
	VCVTDQ2PS    Y13, Y13 \
	VBROADCASTSS (4*k)(SP), Y14 \
	VFMADD231PS  Y13, Y14, acc

#define Q4TOK(k, acc) \
	VPMADDUBSW   (32*k)(R8), Y10, Y13 \
	VPSUBW       (32*k)(R10), Y13, Y13 \
	VPMADDWD     Y15, Y13, Y13 \
	VCVTDQ2PS    Y13, Y13 \
	VBROADCASTSS (4*k)(SP), Y14 \
	VFMADD231PS  Y13, Y14, acc

#define WNEXT(wstep, xstep, dstep) \
	ADDQ $wstep, SI \
	ADDQ $xstep, R8 \
	ADDQ $xstep, R10 \
	ADDQ $dstep, R9 \
	DECQ CX

// WOUT stores acc's horizontal sum at (AX) and moves AX to the next token.
#define WOUT(y, x) \
	VEXTRACTF128 $1, y, X13 \
	VADDPS       X13, x, x \
	VHADDPS      x, x, x \
	VHADDPS      x, x, x \
	VMOVSS       x, (AX) \
	ADDQ         DX, AX

// func q8_0Tile1x5(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q8_0Tile1x5(SB), NOSPLIT, $64-72
	WARGS

q80w15row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	WSTART
	TESTQ CX, CX
	JEQ   q80w15done

q80w15loop:
	WDW
	WSCALES8(0)
	Q8W
	Q8TOK(0, Y0)
	Q8TOK(1, Y1)
	Q8TOK(2, Y2)
	Q8TOK(3, Y3)
	Q8TOK(4, Y4)
	WNEXT(34, 160, 20)
	JNZ   q80w15loop

q80w15done:
	MOVQ DI, AX
	WOUT(Y0, X0)
	WOUT(Y1, X1)
	WOUT(Y2, X2)
	WOUT(Y3, X3)
	WOUT(Y4, X4)
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  q80w15row
	VZEROUPPER
	RET

// func q8_0Tile1x6(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q8_0Tile1x6(SB), NOSPLIT, $64-72
	WARGS

q80w16row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	WSTART
	TESTQ CX, CX
	JEQ   q80w16done

q80w16loop:
	WDW
	WSCALES8(0)
	Q8W
	Q8TOK(0, Y0)
	Q8TOK(1, Y1)
	Q8TOK(2, Y2)
	Q8TOK(3, Y3)
	Q8TOK(4, Y4)
	Q8TOK(5, Y5)
	WNEXT(34, 192, 24)
	JNZ   q80w16loop

q80w16done:
	MOVQ DI, AX
	WOUT(Y0, X0)
	WOUT(Y1, X1)
	WOUT(Y2, X2)
	WOUT(Y3, X3)
	WOUT(Y4, X4)
	WOUT(Y5, X5)
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  q80w16row
	VZEROUPPER
	RET

// func q8_0Tile1x7(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q8_0Tile1x7(SB), NOSPLIT, $64-72
	WARGS

q80w17row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	WSTART
	TESTQ CX, CX
	JEQ   q80w17done

q80w17loop:
	WDW
	WSCALES8(0)
	Q8W
	Q8TOK(0, Y0)
	Q8TOK(1, Y1)
	Q8TOK(2, Y2)
	Q8TOK(3, Y3)
	Q8TOK(4, Y4)
	Q8TOK(5, Y5)
	Q8TOK(6, Y6)
	WNEXT(34, 224, 28)
	JNZ   q80w17loop

q80w17done:
	MOVQ DI, AX
	WOUT(Y0, X0)
	WOUT(Y1, X1)
	WOUT(Y2, X2)
	WOUT(Y3, X3)
	WOUT(Y4, X4)
	WOUT(Y5, X5)
	WOUT(Y6, X6)
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  q80w17row
	VZEROUPPER
	RET

// func q8_0Tile1x8(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q8_0Tile1x8(SB), NOSPLIT, $64-72
	WARGS

q80w18row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	WSTART
	TESTQ CX, CX
	JEQ   q80w18done

q80w18loop:
	WDW
	WSCALES8(0)
	Q8W
	Q8TOK(0, Y0)
	Q8TOK(1, Y1)
	Q8TOK(2, Y2)
	Q8TOK(3, Y3)
	Q8TOK(4, Y4)
	Q8TOK(5, Y5)
	Q8TOK(6, Y6)
	Q8TOK(7, Y7)
	WNEXT(34, 256, 32)
	JNZ   q80w18loop

q80w18done:
	MOVQ DI, AX
	WOUT(Y0, X0)
	WOUT(Y1, X1)
	WOUT(Y2, X2)
	WOUT(Y3, X3)
	WOUT(Y4, X4)
	WOUT(Y5, X5)
	WOUT(Y6, X6)
	WOUT(Y7, X7)
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  q80w18row
	VZEROUPPER
	RET

// func q8_0Tile1x9(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q8_0Tile1x9(SB), NOSPLIT, $64-72
	WARGS

q80w19row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	WSTART
	TESTQ CX, CX
	JEQ   q80w19done

q80w19loop:
	WDW
	WSCALES8(0)
	WSCALES8(32)
	Q8W
	Q8TOK(0, Y0)
	Q8TOK(1, Y1)
	Q8TOK(2, Y2)
	Q8TOK(3, Y3)
	Q8TOK(4, Y4)
	Q8TOK(5, Y5)
	Q8TOK(6, Y6)
	Q8TOK(7, Y7)
	Q8TOK(8, Y8)
	WNEXT(34, 288, 36)
	JNZ   q80w19loop

q80w19done:
	MOVQ DI, AX
	WOUT(Y0, X0)
	WOUT(Y1, X1)
	WOUT(Y2, X2)
	WOUT(Y3, X3)
	WOUT(Y4, X4)
	WOUT(Y5, X5)
	WOUT(Y6, X6)
	WOUT(Y7, X7)
	WOUT(Y8, X8)
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  q80w19row
	VZEROUPPER
	RET

// func q8_0Tile1x10(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q8_0Tile1x10(SB), NOSPLIT, $64-72
	WARGS

q80w110row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	WSTART
	TESTQ CX, CX
	JEQ   q80w110done

q80w110loop:
	WDW
	WSCALES8(0)
	WSCALES8(32)
	Q8W
	Q8TOK(0, Y0)
	Q8TOK(1, Y1)
	Q8TOK(2, Y2)
	Q8TOK(3, Y3)
	Q8TOK(4, Y4)
	Q8TOK(5, Y5)
	Q8TOK(6, Y6)
	Q8TOK(7, Y7)
	Q8TOK(8, Y8)
	Q8TOK(9, Y9)
	WNEXT(34, 320, 40)
	JNZ   q80w110loop

q80w110done:
	MOVQ DI, AX
	WOUT(Y0, X0)
	WOUT(Y1, X1)
	WOUT(Y2, X2)
	WOUT(Y3, X3)
	WOUT(Y4, X4)
	WOUT(Y5, X5)
	WOUT(Y6, X6)
	WOUT(Y7, X7)
	WOUT(Y8, X8)
	WOUT(Y9, X9)
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  q80w110row
	VZEROUPPER
	RET

// func q4_0Tile1x5(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q4_0Tile1x5(SB), NOSPLIT, $64-72
	WARGS

q40w15row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	WSTART
	TESTQ CX, CX
	JEQ   q40w15done

q40w15loop:
	WDW
	WSCALES8(0)
	Q4W
	Q4TOK(0, Y0)
	Q4TOK(1, Y1)
	Q4TOK(2, Y2)
	Q4TOK(3, Y3)
	Q4TOK(4, Y4)
	WNEXT(18, 160, 20)
	JNZ   q40w15loop

q40w15done:
	MOVQ DI, AX
	WOUT(Y0, X0)
	WOUT(Y1, X1)
	WOUT(Y2, X2)
	WOUT(Y3, X3)
	WOUT(Y4, X4)
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  q40w15row
	VZEROUPPER
	RET

// func q4_0Tile1x6(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q4_0Tile1x6(SB), NOSPLIT, $64-72
	WARGS

q40w16row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	WSTART
	TESTQ CX, CX
	JEQ   q40w16done

q40w16loop:
	WDW
	WSCALES8(0)
	Q4W
	Q4TOK(0, Y0)
	Q4TOK(1, Y1)
	Q4TOK(2, Y2)
	Q4TOK(3, Y3)
	Q4TOK(4, Y4)
	Q4TOK(5, Y5)
	WNEXT(18, 192, 24)
	JNZ   q40w16loop

q40w16done:
	MOVQ DI, AX
	WOUT(Y0, X0)
	WOUT(Y1, X1)
	WOUT(Y2, X2)
	WOUT(Y3, X3)
	WOUT(Y4, X4)
	WOUT(Y5, X5)
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  q40w16row
	VZEROUPPER
	RET

// func q4_0Tile1x7(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q4_0Tile1x7(SB), NOSPLIT, $64-72
	WARGS

q40w17row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	WSTART
	TESTQ CX, CX
	JEQ   q40w17done

q40w17loop:
	WDW
	WSCALES8(0)
	Q4W
	Q4TOK(0, Y0)
	Q4TOK(1, Y1)
	Q4TOK(2, Y2)
	Q4TOK(3, Y3)
	Q4TOK(4, Y4)
	Q4TOK(5, Y5)
	Q4TOK(6, Y6)
	WNEXT(18, 224, 28)
	JNZ   q40w17loop

q40w17done:
	MOVQ DI, AX
	WOUT(Y0, X0)
	WOUT(Y1, X1)
	WOUT(Y2, X2)
	WOUT(Y3, X3)
	WOUT(Y4, X4)
	WOUT(Y5, X5)
	WOUT(Y6, X6)
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  q40w17row
	VZEROUPPER
	RET

// func q4_0Tile1x8(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q4_0Tile1x8(SB), NOSPLIT, $64-72
	WARGS

q40w18row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	WSTART
	TESTQ CX, CX
	JEQ   q40w18done

q40w18loop:
	WDW
	WSCALES8(0)
	Q4W
	Q4TOK(0, Y0)
	Q4TOK(1, Y1)
	Q4TOK(2, Y2)
	Q4TOK(3, Y3)
	Q4TOK(4, Y4)
	Q4TOK(5, Y5)
	Q4TOK(6, Y6)
	Q4TOK(7, Y7)
	WNEXT(18, 256, 32)
	JNZ   q40w18loop

q40w18done:
	MOVQ DI, AX
	WOUT(Y0, X0)
	WOUT(Y1, X1)
	WOUT(Y2, X2)
	WOUT(Y3, X3)
	WOUT(Y4, X4)
	WOUT(Y5, X5)
	WOUT(Y6, X6)
	WOUT(Y7, X7)
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  q40w18row
	VZEROUPPER
	RET

// func q4_0Tile1x9(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q4_0Tile1x9(SB), NOSPLIT, $64-72
	WARGS

q40w19row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	WSTART
	TESTQ CX, CX
	JEQ   q40w19done

q40w19loop:
	WDW
	WSCALES8(0)
	WSCALES8(32)
	Q4W
	Q4TOK(0, Y0)
	Q4TOK(1, Y1)
	Q4TOK(2, Y2)
	Q4TOK(3, Y3)
	Q4TOK(4, Y4)
	Q4TOK(5, Y5)
	Q4TOK(6, Y6)
	Q4TOK(7, Y7)
	Q4TOK(8, Y8)
	WNEXT(18, 288, 36)
	JNZ   q40w19loop

q40w19done:
	MOVQ DI, AX
	WOUT(Y0, X0)
	WOUT(Y1, X1)
	WOUT(Y2, X2)
	WOUT(Y3, X3)
	WOUT(Y4, X4)
	WOUT(Y5, X5)
	WOUT(Y6, X6)
	WOUT(Y7, X7)
	WOUT(Y8, X8)
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  q40w19row
	VZEROUPPER
	RET

// func q4_0Tile1x10(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q4_0Tile1x10(SB), NOSPLIT, $64-72
	WARGS

q40w110row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	WSTART
	TESTQ CX, CX
	JEQ   q40w110done

q40w110loop:
	WDW
	WSCALES8(0)
	WSCALES8(32)
	Q4W
	Q4TOK(0, Y0)
	Q4TOK(1, Y1)
	Q4TOK(2, Y2)
	Q4TOK(3, Y3)
	Q4TOK(4, Y4)
	Q4TOK(5, Y5)
	Q4TOK(6, Y6)
	Q4TOK(7, Y7)
	Q4TOK(8, Y8)
	Q4TOK(9, Y9)
	WNEXT(18, 320, 40)
	JNZ   q40w110loop

q40w110done:
	MOVQ DI, AX
	WOUT(Y0, X0)
	WOUT(Y1, X1)
	WOUT(Y2, X2)
	WOUT(Y3, X3)
	WOUT(Y4, X4)
	WOUT(Y5, X5)
	WOUT(Y6, X6)
	WOUT(Y7, X7)
	WOUT(Y8, X8)
	WOUT(Y9, X9)
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  q40w110row
	VZEROUPPER
	RET
