//go:build !purego

#include "go_asm.h"
#include "textflag.h"

// Arithmetic for 8-limb (512-bit) Montgomery fields. Multiplication uses
// MULX, ADCX and ADOX: the CIOS scheme of mul4CIOS (field_amd64.s) widened to eight limbs,
// returning exactly what mulGeneric returns (the Montgomery product, fully
// reduced below p).
//
// The running sum needs ten registers (t0..t9), which with MULX's two
// outputs, its implicit DX and a zero leaves none for pointers. x, p, pInv
// and y are therefore copied into the frame first and addressed from SP;
// that also makes z free to alias x or y. R15 is safe to use because this
// function reads no globals.
//
// Frame: x at 0(SP), p at 64(SP), y at 128(SP), pInv at 192(SP).

// MUL_ROW8 adds x·y[i] (y[i] already in DX) to t0..t8 and the carries into
// t9, which must be zero on entry. XORQ zeroes DI and clears CF and OF.
#define MUL_ROW8(t0, t1, t2, t3, t4, t5, t6, t7, t8, t9) \
	XORQ  DI, DI        \
	MULXQ 0(SP), AX, BX \
	ADOXQ AX, t0 \
	ADCXQ BX, t1 \
	MULXQ 8(SP), AX, BX \
	ADOXQ AX, t1 \
	ADCXQ BX, t2 \
	MULXQ 16(SP), AX, BX \
	ADOXQ AX, t2 \
	ADCXQ BX, t3 \
	MULXQ 24(SP), AX, BX \
	ADOXQ AX, t3 \
	ADCXQ BX, t4 \
	MULXQ 32(SP), AX, BX \
	ADOXQ AX, t4 \
	ADCXQ BX, t5 \
	MULXQ 40(SP), AX, BX \
	ADOXQ AX, t5 \
	ADCXQ BX, t6 \
	MULXQ 48(SP), AX, BX \
	ADOXQ AX, t6 \
	ADCXQ BX, t7 \
	MULXQ 56(SP), AX, BX \
	ADOXQ AX, t7 \
	ADCXQ BX, t8 \
	ADOXQ DI, t8 \
	ADCXQ DI, t9 \
	ADOXQ DI, t9

// REDUCE_ROW8 adds m·p to t0..t9 with m = t0·pInv mod 2⁶⁴, which zeroes t0.
#define REDUCE_ROW8(t0, t1, t2, t3, t4, t5, t6, t7, t8, t9) \
	MOVQ  192(SP), DX   \
	IMULQ t0, DX        \
	XORQ  DI, DI        \
	MULXQ 64(SP), AX, BX \
	ADCXQ AX, t0 \
	ADOXQ BX, t1 \
	MULXQ 72(SP), AX, BX \
	ADCXQ AX, t1 \
	ADOXQ BX, t2 \
	MULXQ 80(SP), AX, BX \
	ADCXQ AX, t2 \
	ADOXQ BX, t3 \
	MULXQ 88(SP), AX, BX \
	ADCXQ AX, t3 \
	ADOXQ BX, t4 \
	MULXQ 96(SP), AX, BX \
	ADCXQ AX, t4 \
	ADOXQ BX, t5 \
	MULXQ 104(SP), AX, BX \
	ADCXQ AX, t5 \
	ADOXQ BX, t6 \
	MULXQ 112(SP), AX, BX \
	ADCXQ AX, t6 \
	ADOXQ BX, t7 \
	MULXQ 120(SP), AX, BX \
	ADCXQ AX, t7 \
	ADOXQ BX, t8 \
	ADCXQ DI, t8 \
	ADOXQ DI, t9 \
	ADCXQ DI, t9

// func mul8CIOS(f *montField, z, x, y *fe)
TEXT ·mul8CIOS(SB), NOSPLIT, $200-32
	MOVQ f+0(FP), CX
	MOVQ x+16(FP), SI
	MOVQ y+24(FP), DI
	MOVQ 0(SI), AX
	MOVQ AX, 0(SP)
	MOVQ (montField_p+0)(CX), AX
	MOVQ AX, 64(SP)
	MOVQ 0(DI), AX
	MOVQ AX, 128(SP)
	MOVQ 8(SI), AX
	MOVQ AX, 8(SP)
	MOVQ (montField_p+8)(CX), AX
	MOVQ AX, 72(SP)
	MOVQ 8(DI), AX
	MOVQ AX, 136(SP)
	MOVQ 16(SI), AX
	MOVQ AX, 16(SP)
	MOVQ (montField_p+16)(CX), AX
	MOVQ AX, 80(SP)
	MOVQ 16(DI), AX
	MOVQ AX, 144(SP)
	MOVQ 24(SI), AX
	MOVQ AX, 24(SP)
	MOVQ (montField_p+24)(CX), AX
	MOVQ AX, 88(SP)
	MOVQ 24(DI), AX
	MOVQ AX, 152(SP)
	MOVQ 32(SI), AX
	MOVQ AX, 32(SP)
	MOVQ (montField_p+32)(CX), AX
	MOVQ AX, 96(SP)
	MOVQ 32(DI), AX
	MOVQ AX, 160(SP)
	MOVQ 40(SI), AX
	MOVQ AX, 40(SP)
	MOVQ (montField_p+40)(CX), AX
	MOVQ AX, 104(SP)
	MOVQ 40(DI), AX
	MOVQ AX, 168(SP)
	MOVQ 48(SI), AX
	MOVQ AX, 48(SP)
	MOVQ (montField_p+48)(CX), AX
	MOVQ AX, 112(SP)
	MOVQ 48(DI), AX
	MOVQ AX, 176(SP)
	MOVQ 56(SI), AX
	MOVQ AX, 56(SP)
	MOVQ (montField_p+56)(CX), AX
	MOVQ AX, 120(SP)
	MOVQ 56(DI), AX
	MOVQ AX, 184(SP)
	MOVQ montField_pInv(CX), AX
	MOVQ AX, 192(SP)

	// Row 0: t = x·y[0], a plain carry chain since t starts at zero.
	XORQ  SI, SI
	MOVQ  128(SP), DX
	MULXQ 0(SP), R8, R9
	MULXQ 8(SP), AX, R10
	ADDQ  AX, R9
	MULXQ 16(SP), AX, R11
	ADCQ  AX, R10
	MULXQ 24(SP), AX, R12
	ADCQ  AX, R11
	MULXQ 32(SP), AX, R13
	ADCQ  AX, R12
	MULXQ 40(SP), AX, R14
	ADCQ  AX, R13
	MULXQ 48(SP), AX, R15
	ADCQ  AX, R14
	MULXQ 56(SP), AX, CX
	ADCQ  AX, R15
	ADCQ  $0, CX
	REDUCE_ROW8(R8, R9, R10, R11, R12, R13, R14, R15, CX, SI)

	MOVQ 136(SP), DX
	MUL_ROW8(R9, R10, R11, R12, R13, R14, R15, CX, SI, R8)
	REDUCE_ROW8(R9, R10, R11, R12, R13, R14, R15, CX, SI, R8)

	MOVQ 144(SP), DX
	MUL_ROW8(R10, R11, R12, R13, R14, R15, CX, SI, R8, R9)
	REDUCE_ROW8(R10, R11, R12, R13, R14, R15, CX, SI, R8, R9)

	MOVQ 152(SP), DX
	MUL_ROW8(R11, R12, R13, R14, R15, CX, SI, R8, R9, R10)
	REDUCE_ROW8(R11, R12, R13, R14, R15, CX, SI, R8, R9, R10)

	MOVQ 160(SP), DX
	MUL_ROW8(R12, R13, R14, R15, CX, SI, R8, R9, R10, R11)
	REDUCE_ROW8(R12, R13, R14, R15, CX, SI, R8, R9, R10, R11)

	MOVQ 168(SP), DX
	MUL_ROW8(R13, R14, R15, CX, SI, R8, R9, R10, R11, R12)
	REDUCE_ROW8(R13, R14, R15, CX, SI, R8, R9, R10, R11, R12)

	MOVQ 176(SP), DX
	MUL_ROW8(R14, R15, CX, SI, R8, R9, R10, R11, R12, R13)
	REDUCE_ROW8(R14, R15, CX, SI, R8, R9, R10, R11, R12, R13)

	MOVQ 184(SP), DX
	MUL_ROW8(R15, CX, SI, R8, R9, R10, R11, R12, R13, R14)
	REDUCE_ROW8(R15, CX, SI, R8, R9, R10, R11, R12, R13, R14)

	// t = CX, SI, R8, R9, R10, R11, R12, R13 with the top bit in R14, and t < 2p.
	// Store t − p, then put t back wherever that borrowed, with CMOV so the
	// choice takes the same time either way.
	MOVQ z+8(FP), DI
	MOVQ CX, AX
	SUBQ 64(SP), AX
	MOVQ AX, 0(DI)
	MOVQ SI, AX
	SBBQ 72(SP), AX
	MOVQ AX, 8(DI)
	MOVQ R8, AX
	SBBQ 80(SP), AX
	MOVQ AX, 16(DI)
	MOVQ R9, AX
	SBBQ 88(SP), AX
	MOVQ AX, 24(DI)
	MOVQ R10, AX
	SBBQ 96(SP), AX
	MOVQ AX, 32(DI)
	MOVQ R11, AX
	SBBQ 104(SP), AX
	MOVQ AX, 40(DI)
	MOVQ R12, AX
	SBBQ 112(SP), AX
	MOVQ AX, 48(DI)
	MOVQ R13, AX
	SBBQ 120(SP), AX
	MOVQ AX, 56(DI)
	SBBQ $0, R14
	MOVQ 0(DI), AX
	CMOVQCS CX, AX
	MOVQ AX, 0(DI)
	MOVQ 8(DI), AX
	CMOVQCS SI, AX
	MOVQ AX, 8(DI)
	MOVQ 16(DI), AX
	CMOVQCS R8, AX
	MOVQ AX, 16(DI)
	MOVQ 24(DI), AX
	CMOVQCS R9, AX
	MOVQ AX, 24(DI)
	MOVQ 32(DI), AX
	CMOVQCS R10, AX
	MOVQ AX, 32(DI)
	MOVQ 40(DI), AX
	CMOVQCS R11, AX
	MOVQ AX, 40(DI)
	MOVQ 48(DI), AX
	CMOVQCS R12, AX
	MOVQ AX, 48(DI)
	MOVQ 56(DI), AX
	CMOVQCS R13, AX
	MOVQ AX, 56(DI)
	RET

// add8 and sub8 are montAdd and montSub for 8-limb fields, with x held in
// R8..R15 (R15 is safe: no globals are read). The result is first stored
// unconditionally (t − p for add8, d + p for sub8), then overwritten limb
// by limb with CMOV where the other choice applies, so the choice costs the
// same time either way. y is read before z is written, so z may alias
// either input.

// func add8(f *montField, z, x, y *fe)
TEXT ·add8(SB), NOSPLIT, $0-32
	MOVQ f+0(FP), CX
	MOVQ x+16(FP), SI
	MOVQ y+24(FP), DI
	MOVQ 0(SI), R8
	MOVQ 8(SI), R9
	MOVQ 16(SI), R10
	MOVQ 24(SI), R11
	MOVQ 32(SI), R12
	MOVQ 40(SI), R13
	MOVQ 48(SI), R14
	MOVQ 56(SI), R15
	XORQ AX, AX
	ADDQ 0(DI), R8
	ADCQ 8(DI), R9
	ADCQ 16(DI), R10
	ADCQ 24(DI), R11
	ADCQ 32(DI), R12
	ADCQ 40(DI), R13
	ADCQ 48(DI), R14
	ADCQ 56(DI), R15
	ADCQ $0, AX

	// Store t − p; keep t where that borrowed (t < p).
	MOVQ z+8(FP), DI
	MOVQ R8, BX
	SUBQ (montField_p+0)(CX), BX
	MOVQ BX, 0(DI)
	MOVQ R9, BX
	SBBQ (montField_p+8)(CX), BX
	MOVQ BX, 8(DI)
	MOVQ R10, BX
	SBBQ (montField_p+16)(CX), BX
	MOVQ BX, 16(DI)
	MOVQ R11, BX
	SBBQ (montField_p+24)(CX), BX
	MOVQ BX, 24(DI)
	MOVQ R12, BX
	SBBQ (montField_p+32)(CX), BX
	MOVQ BX, 32(DI)
	MOVQ R13, BX
	SBBQ (montField_p+40)(CX), BX
	MOVQ BX, 40(DI)
	MOVQ R14, BX
	SBBQ (montField_p+48)(CX), BX
	MOVQ BX, 48(DI)
	MOVQ R15, BX
	SBBQ (montField_p+56)(CX), BX
	MOVQ BX, 56(DI)
	SBBQ $0, AX
	MOVQ 0(DI), BX
	CMOVQCS R8, BX
	MOVQ BX, 0(DI)
	MOVQ 8(DI), BX
	CMOVQCS R9, BX
	MOVQ BX, 8(DI)
	MOVQ 16(DI), BX
	CMOVQCS R10, BX
	MOVQ BX, 16(DI)
	MOVQ 24(DI), BX
	CMOVQCS R11, BX
	MOVQ BX, 24(DI)
	MOVQ 32(DI), BX
	CMOVQCS R12, BX
	MOVQ BX, 32(DI)
	MOVQ 40(DI), BX
	CMOVQCS R13, BX
	MOVQ BX, 40(DI)
	MOVQ 48(DI), BX
	CMOVQCS R14, BX
	MOVQ BX, 48(DI)
	MOVQ 56(DI), BX
	CMOVQCS R15, BX
	MOVQ BX, 56(DI)
	RET

// func sub8(f *montField, z, x, y *fe)
TEXT ·sub8(SB), NOSPLIT, $0-32
	MOVQ f+0(FP), CX
	MOVQ x+16(FP), SI
	MOVQ y+24(FP), DI
	MOVQ 0(SI), R8
	MOVQ 8(SI), R9
	MOVQ 16(SI), R10
	MOVQ 24(SI), R11
	MOVQ 32(SI), R12
	MOVQ 40(SI), R13
	MOVQ 48(SI), R14
	MOVQ 56(SI), R15
	SUBQ 0(DI), R8
	SBBQ 8(DI), R9
	SBBQ 16(DI), R10
	SBBQ 24(DI), R11
	SBBQ 32(DI), R12
	SBBQ 40(DI), R13
	SBBQ 48(DI), R14
	SBBQ 56(DI), R15
	SBBQ AX, AX

	// Store d + p; keep d where x − y did not borrow (AX = 0).
	MOVQ z+8(FP), DI
	MOVQ R8, BX
	ADDQ (montField_p+0)(CX), BX
	MOVQ BX, 0(DI)
	MOVQ R9, BX
	ADCQ (montField_p+8)(CX), BX
	MOVQ BX, 8(DI)
	MOVQ R10, BX
	ADCQ (montField_p+16)(CX), BX
	MOVQ BX, 16(DI)
	MOVQ R11, BX
	ADCQ (montField_p+24)(CX), BX
	MOVQ BX, 24(DI)
	MOVQ R12, BX
	ADCQ (montField_p+32)(CX), BX
	MOVQ BX, 32(DI)
	MOVQ R13, BX
	ADCQ (montField_p+40)(CX), BX
	MOVQ BX, 40(DI)
	MOVQ R14, BX
	ADCQ (montField_p+48)(CX), BX
	MOVQ BX, 48(DI)
	MOVQ R15, BX
	ADCQ (montField_p+56)(CX), BX
	MOVQ BX, 56(DI)
	TESTQ AX, AX
	MOVQ 0(DI), BX
	CMOVQEQ R8, BX
	MOVQ BX, 0(DI)
	MOVQ 8(DI), BX
	CMOVQEQ R9, BX
	MOVQ BX, 8(DI)
	MOVQ 16(DI), BX
	CMOVQEQ R10, BX
	MOVQ BX, 16(DI)
	MOVQ 24(DI), BX
	CMOVQEQ R11, BX
	MOVQ BX, 24(DI)
	MOVQ 32(DI), BX
	CMOVQEQ R12, BX
	MOVQ BX, 32(DI)
	MOVQ 40(DI), BX
	CMOVQEQ R13, BX
	MOVQ BX, 40(DI)
	MOVQ 48(DI), BX
	CMOVQEQ R14, BX
	MOVQ BX, 48(DI)
	MOVQ 56(DI), BX
	CMOVQEQ R15, BX
	MOVQ BX, 56(DI)
	RET
