//go:build !purego

#include "go_asm.h"
#include "textflag.h"

// Montgomery multiplication and squaring for p = 2²⁵⁶ − c with c < 2⁶⁴
// (pseudo-Mersenne primes such as 2²⁵⁶ − 617 of tc26 256 A and CryptoPro A),
// with MULX, ADCX and ADOX. They return exactly what mul4Generic returns:
// the Montgomery product x·y·2⁻²⁵⁶ mod p is unique, so only the route to it
// differs.
//
// The product T = x·y is formed in full (eight limbs), then its low half L
// is reduced: REDC(T) = H + (L + M·p)/2²⁵⁶ with H the high half. Word by
// word, each step adds m·p = m·2²⁵⁶ − m·c for m = t0·(−p⁻¹) mod 2⁶⁴, which
// makes the low word vanish: the low word of m·c equals t0, so the step is
// one MULX for the high word of m·c, a subtraction with borrow across the
// window, and m entering as the new top word. The window stays below 2²⁵⁶
// throughout (it is (u − m·c)/2⁶⁴ + m·2¹⁹² with u < 2²⁵⁶), so four words
// hold it; for a general p the same step takes four MULX and two carry
// chains. H + u < 2p, so one conditional subtraction of p finishes.
//
// Registers: c0..c7 of the product are R8..R14 and CX; AX and BX take MULX
// halves; DX is MULX's implicit operand; SI points at x. Registers not yet
// holding a product word serve as the zero the carry chains need.

// REDUCE_PM runs one reduction step on the window t0..t3; afterwards the
// window is t1, t2, t3, t0. SI points at the montField.
#define REDUCE_PM(t0, t1, t2, t3) \
	MOVQ  montField_pInv(SI), DX \
	IMULQ t0, DX                 \
	MULXQ montField_pmC(SI), BX, BX \
	MOVQ  DX, t0                 \
	SUBQ  BX, t1                 \
	SBBQ  $0, t2                 \
	SBBQ  $0, t3                 \
	SBBQ  $0, t0

// FINISH_PM reduces L = R8..R11, adds H = R12, R13, R14, CX, subtracts p
// once unless that borrows, and stores the result at z.
#define FINISH_PM \
	MOVQ f+0(FP), SI           \
	REDUCE_PM(R8, R9, R10, R11) \
	REDUCE_PM(R9, R10, R11, R8) \
	REDUCE_PM(R10, R11, R8, R9) \
	REDUCE_PM(R11, R8, R9, R10) \
	XORQ AX, AX                \
	ADDQ R8, R12               \
	ADCQ R9, R13               \
	ADCQ R10, R14              \
	ADCQ R11, CX               \
	ADCQ $0, AX                \
	MOVQ R12, R8               \
	SUBQ (montField_p+0)(SI), R8  \
	MOVQ R13, R9               \
	SBBQ (montField_p+8)(SI), R9  \
	MOVQ R14, R10              \
	SBBQ (montField_p+16)(SI), R10 \
	MOVQ CX, R11               \
	SBBQ (montField_p+24)(SI), R11 \
	SBBQ $0, AX                \
	CMOVQCC R8, R12            \
	CMOVQCC R9, R13            \
	CMOVQCC R10, R14           \
	CMOVQCC R11, CX            \
	MOVQ z+8(FP), DI           \
	MOVQ R12, 0(DI)            \
	MOVQ R13, 8(DI)            \
	MOVQ R14, 16(DI)           \
	MOVQ CX, 24(DI)

// func mul4PseudoMersenne(f *montField, z, x, y *fe)
TEXT ·mul4PseudoMersenne(SB), NOSPLIT, $0-32
	MOVQ x+16(FP), SI
	MOVQ y+24(FP), DI

	// Row 0: c0..c4 = x·y0.
	MOVQ  0(DI), DX
	MULXQ 0(SI), R8, R9
	MULXQ 8(SI), AX, R10
	ADDQ  AX, R9
	MULXQ 16(SI), AX, R11
	ADCQ  AX, R10
	MULXQ 24(SI), AX, R12
	ADCQ  AX, R11
	ADCQ  $0, R12

	// Row 1: c1..c5 += x·y1; c5 is new, so the last MULX writes it and CX
	// (c7, not yet used) is the zero.
	MOVQ  8(DI), DX
	XORQ  CX, CX
	MULXQ 0(SI), AX, BX
	ADOXQ AX, R9
	ADCXQ BX, R10
	MULXQ 8(SI), AX, BX
	ADOXQ AX, R10
	ADCXQ BX, R11
	MULXQ 16(SI), AX, BX
	ADOXQ AX, R11
	ADCXQ BX, R12
	MULXQ 24(SI), AX, R13
	ADOXQ AX, R12
	ADCXQ CX, R13
	ADOXQ CX, R13

	// Row 2: c2..c6 += x·y2.
	MOVQ  16(DI), DX
	XORQ  CX, CX
	MULXQ 0(SI), AX, BX
	ADOXQ AX, R10
	ADCXQ BX, R11
	MULXQ 8(SI), AX, BX
	ADOXQ AX, R11
	ADCXQ BX, R12
	MULXQ 16(SI), AX, BX
	ADOXQ AX, R12
	ADCXQ BX, R13
	MULXQ 24(SI), AX, R14
	ADOXQ AX, R13
	ADCXQ CX, R14
	ADOXQ CX, R14

	// Row 3: c3..c7 += x·y3; y is no longer needed, so DI is the zero.
	MOVQ  24(DI), DX
	XORQ  DI, DI
	MULXQ 0(SI), AX, BX
	ADOXQ AX, R11
	ADCXQ BX, R12
	MULXQ 8(SI), AX, BX
	ADOXQ AX, R12
	ADCXQ BX, R13
	MULXQ 16(SI), AX, BX
	ADOXQ AX, R13
	ADCXQ BX, R14
	MULXQ 24(SI), AX, CX
	ADOXQ AX, R14
	ADCXQ DI, CX
	ADOXQ DI, CX

	FINISH_PM
	RET

// func sqr4PseudoMersenne(f *montField, z, x, xAgain *fe)
//
// The square needs six cross products x_i·x_j (i < j), doubled, plus four
// squares x_i², instead of sixteen products.
TEXT ·sqr4PseudoMersenne(SB), NOSPLIT, $0-32
	MOVQ x+16(FP), SI

	// Cross products into c1..c6.
	MOVQ  0(SI), DX
	MULXQ 8(SI), R9, R10
	MULXQ 16(SI), AX, R11
	ADDQ  AX, R10
	MULXQ 24(SI), AX, R12
	ADCQ  AX, R11
	ADCQ  $0, R12

	MOVQ  8(SI), DX
	XORQ  CX, CX
	MULXQ 16(SI), AX, BX
	ADOXQ AX, R11
	ADCXQ BX, R12
	MULXQ 24(SI), AX, R13
	ADOXQ AX, R12
	ADCXQ CX, R13
	ADOXQ CX, R13

	MOVQ  16(SI), DX
	MULXQ 24(SI), AX, R14
	ADDQ  AX, R13
	ADCQ  $0, R14

	// Double the cross products (CF chain) while adding the squares (OF
	// chain); CX is still zero and becomes c7.
	MOVQ  0(SI), DX
	MULXQ DX, R8, AX
	XORQ  CX, CX
	ADCXQ R9, R9
	ADOXQ AX, R9
	MOVQ  8(SI), DX
	MULXQ DX, AX, BX
	ADCXQ R10, R10
	ADOXQ AX, R10
	ADCXQ R11, R11
	ADOXQ BX, R11
	MOVQ  16(SI), DX
	MULXQ DX, AX, BX
	ADCXQ R12, R12
	ADOXQ AX, R12
	ADCXQ R13, R13
	ADOXQ BX, R13
	MOVQ  24(SI), DX
	MULXQ DX, AX, BX
	ADCXQ R14, R14
	ADOXQ AX, R14
	ADCXQ CX, CX
	ADOXQ BX, CX

	FINISH_PM
	RET
