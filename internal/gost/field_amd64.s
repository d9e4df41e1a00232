//go:build !purego

#include "go_asm.h"
#include "textflag.h"

// Field arithmetic for 4-limb (256-bit) Montgomery fields, and the dispatch
// for 8-limb multiplication (field8_amd64.s). montMul, montSqr, montAdd and
// montSub take the *montField, check that the assembly applies (limb count
// and, for multiplication, BMI2 and ADX) and otherwise jump to the Go code
// with the same arguments. Dispatching here rather than in Go
// keeps montField.mul, sqr, add and sub small enough to inline, so the point
// formulas reach the arithmetic in one call.
//
// Multiplication has two implementations, both computing exactly what
// mul4Generic computes (the Montgomery product, fully reduced below p):
// mul4CIOS below for any p, and mul4PseudoMersenne with a dedicated
// squaring (field_pm_amd64.s) for p = 2²⁵⁶ − c, which the 256-bit tc26 A and
// CryptoPro A curves use.

// func montMul(f *montField, z, x, y *fe)
TEXT ·montMul(SB), NOSPLIT, $0-32
	MOVQ f+0(FP), CX
	CMPB ·hasMULX(SB), $0
	JEQ  mulGo
	CMPQ montField_n(CX), $4
	JNE  mulWide
	CMPB montField_pseudoMersenne(CX), $0
	JNE  mulPM
	JMP  ·mul4CIOS(SB)

mulPM:
	JMP ·mul4PseudoMersenne(SB)

mulWide:
	CMPQ montField_n(CX), $8
	JNE  mulGo
	JMP  ·mul8CIOS(SB)

mulGo:
	JMP ·mulFallback(SB)

// func montSqr(f *montField, z, x, xAgain *fe)
//
// x comes twice so that the frame can go unchanged to montMul.
TEXT ·montSqr(SB), NOSPLIT, $0-32
	MOVQ f+0(FP), CX
	CMPQ montField_n(CX), $4
	JNE  sqrMul
	CMPB ·hasMULX(SB), $0
	JEQ  sqrMul
	CMPB montField_pseudoMersenne(CX), $0
	JEQ  sqrMul
	JMP  ·sqr4PseudoMersenne(SB)

sqrMul:
	JMP ·montMul(SB)

// mul4CIOS multiplies with CIOS (a reduction row after each row of partial
// products) using MULX, ADCX and ADOX: each row feeds two independent carry
// chains, CF for the high halves and OF for the low ones, so the additions
// do not wait on each other.
//
// The running sum t is six registers t0..t5. After each reduction step t0
// is zero and the sum shifts down one limb; instead of moving registers the
// steps below name them rotated, and the zeroed t0 becomes the next t5.

// MUL_ROW adds x·y[i] (y[i] already in DX) to t0..t4 and the carries into
// t5, which must be zero on entry. XORQ zeroes R14 and clears CF and OF for
// the two chains.
#define MUL_ROW(t0, t1, t2, t3, t4, t5) \
	XORQ  R14, R14     \
	MULXQ 0(SI), AX, BX  \
	ADOXQ AX, t0       \
	ADCXQ BX, t1       \
	MULXQ 8(SI), AX, BX  \
	ADOXQ AX, t1       \
	ADCXQ BX, t2       \
	MULXQ 16(SI), AX, BX \
	ADOXQ AX, t2       \
	ADCXQ BX, t3       \
	MULXQ 24(SI), AX, BX \
	ADOXQ AX, t3       \
	ADCXQ BX, t4       \
	ADOXQ R14, t4      \
	ADCXQ R14, t5      \
	ADOXQ R14, t5

// REDUCE_ROW adds m·p to t0..t5 with m = t0·pInv mod 2⁶⁴, which zeroes t0.
// CX points at the montField.
#define REDUCE_ROW(t0, t1, t2, t3, t4, t5) \
	MOVQ  montField_pInv(CX), DX \
	IMULQ t0, DX          \
	XORQ  R14, R14        \
	MULXQ (montField_p+0)(CX), AX, BX   \
	ADCXQ AX, t0          \
	ADOXQ BX, t1          \
	MULXQ (montField_p+8)(CX), AX, BX   \
	ADCXQ AX, t1          \
	ADOXQ BX, t2          \
	MULXQ (montField_p+16)(CX), AX, BX  \
	ADCXQ AX, t2          \
	ADOXQ BX, t3          \
	MULXQ (montField_p+24)(CX), AX, BX  \
	ADCXQ AX, t3          \
	ADOXQ BX, t4          \
	ADCXQ R14, t4         \
	ADOXQ R14, t5         \
	ADCXQ R14, t5

// func mul4CIOS(f *montField, z, x, y *fe)
TEXT ·mul4CIOS(SB), NOSPLIT, $0-32
	MOVQ f+0(FP), CX
	MOVQ x+16(FP), SI
	MOVQ y+24(FP), DI

	// Row 0: t = x·y[0], a plain carry chain since t starts at zero.
	XORQ  R13, R13
	MOVQ  0(DI), DX
	MULXQ 0(SI), R8, R9
	MULXQ 8(SI), AX, R10
	ADDQ  AX, R9
	MULXQ 16(SI), AX, R11
	ADCQ  AX, R10
	MULXQ 24(SI), AX, R12
	ADCQ  AX, R11
	ADCQ  $0, R12
	REDUCE_ROW(R8, R9, R10, R11, R12, R13)

	MOVQ 8(DI), DX
	MUL_ROW(R9, R10, R11, R12, R13, R8)
	REDUCE_ROW(R9, R10, R11, R12, R13, R8)

	MOVQ 16(DI), DX
	MUL_ROW(R10, R11, R12, R13, R8, R9)
	REDUCE_ROW(R10, R11, R12, R13, R8, R9)

	MOVQ 24(DI), DX
	MUL_ROW(R11, R12, R13, R8, R9, R10)
	REDUCE_ROW(R11, R12, R13, R8, R9, R10)

	// t = R12, R13, R8, R9 with the top bit in R10, and t < 2p. Subtract p
	// and keep the difference unless it borrowed, with CMOV so the choice
	// takes the same time either way.
	MOVQ R12, AX
	SUBQ (montField_p+0)(CX), AX
	MOVQ R13, BX
	SBBQ (montField_p+8)(CX), BX
	MOVQ R8, DX
	SBBQ (montField_p+16)(CX), DX
	MOVQ R9, SI
	SBBQ (montField_p+24)(CX), SI
	SBBQ $0, R10
	CMOVQCC AX, R12
	CMOVQCC BX, R13
	CMOVQCC DX, R8
	CMOVQCC SI, R9

	MOVQ z+8(FP), DI
	MOVQ R12, 0(DI)
	MOVQ R13, 8(DI)
	MOVQ R8, 16(DI)
	MOVQ R9, 24(DI)
	RET

// func montAdd(f *montField, z, x, y *fe)
TEXT ·montAdd(SB), NOSPLIT, $0-32
	MOVQ f+0(FP), CX
	CMPQ montField_n(CX), $4
	JNE  addWide
	MOVQ x+16(FP), SI
	MOVQ y+24(FP), DI

	// t = x + y in R8..R11 with the carry in R12; t < 2p.
	XORQ R12, R12
	MOVQ 0(SI), R8
	ADDQ 0(DI), R8
	MOVQ 8(SI), R9
	ADCQ 8(DI), R9
	MOVQ 16(SI), R10
	ADCQ 16(DI), R10
	MOVQ 24(SI), R11
	ADCQ 24(DI), R11
	ADCQ $0, R12

	// Keep t − p unless it borrows.
	MOVQ R8, AX
	SUBQ (montField_p+0)(CX), AX
	MOVQ R9, BX
	SBBQ (montField_p+8)(CX), BX
	MOVQ R10, DX
	SBBQ (montField_p+16)(CX), DX
	MOVQ R11, SI
	SBBQ (montField_p+24)(CX), SI
	SBBQ $0, R12
	CMOVQCC AX, R8
	CMOVQCC BX, R9
	CMOVQCC DX, R10
	CMOVQCC SI, R11

	MOVQ z+8(FP), DI
	MOVQ R8, 0(DI)
	MOVQ R9, 8(DI)
	MOVQ R10, 16(DI)
	MOVQ R11, 24(DI)
	RET

addWide:
	CMPQ montField_n(CX), $8
	JNE  addGo
	JMP  ·add8(SB)

addGo:
	JMP ·addFallback(SB)

// func montSub(f *montField, z, x, y *fe)
TEXT ·montSub(SB), NOSPLIT, $0-32
	MOVQ f+0(FP), CX
	CMPQ montField_n(CX), $4
	JNE  subWide
	MOVQ x+16(FP), SI
	MOVQ y+24(FP), DI

	// d = x − y; on a borrow add p back, masked rather than branched.
	MOVQ 0(SI), R8
	SUBQ 0(DI), R8
	MOVQ 8(SI), R9
	SBBQ 8(DI), R9
	MOVQ 16(SI), R10
	SBBQ 16(DI), R10
	MOVQ 24(SI), R11
	SBBQ 24(DI), R11
	SBBQ R12, R12
	MOVQ (montField_p+0)(CX), AX
	ANDQ R12, AX
	MOVQ (montField_p+8)(CX), BX
	ANDQ R12, BX
	MOVQ (montField_p+16)(CX), DX
	ANDQ R12, DX
	MOVQ (montField_p+24)(CX), SI
	ANDQ R12, SI
	ADDQ AX, R8
	ADCQ BX, R9
	ADCQ DX, R10
	ADCQ SI, R11

	MOVQ z+8(FP), DI
	MOVQ R8, 0(DI)
	MOVQ R9, 8(DI)
	MOVQ R10, 16(DI)
	MOVQ R11, 24(DI)
	RET

subWide:
	CMPQ montField_n(CX), $8
	JNE  subGo
	JMP  ·sub8(SB)

subGo:
	JMP ·subFallback(SB)
