//go:build !purego

#include "textflag.h"

// Attention scores of a KV group of one query head (multi-head attention,
// as in the 15M shape): the grouped kernels of attn_group_amd64.s would
// compute that head in three lanes at once, three times the arithmetic.
// This kernel takes eight or four positions per pass instead, with the
// same operations per position as those kernels (eight-wide fused
// multiply-adds along the head, the HSUM4 reduction, the two halves added,
// then scaled), so a head's scores are bit-identical to theirs.

// func attnScoresF16x1AVX2(out *float32, q *float32, k *uint16, stride, hd, n int, scale float32, vdelta int)
TEXT ·attnScoresF16x1AVX2(SB), NOSPLIT, $0-64
	MOVQ         out+0(FP), DI
	MOVQ         q+8(FP), SI
	MOVQ         k+16(FP), BX
	MOVQ         stride+24(FP), R13
	SHLQ         $1, R13
	MOVQ         hd+32(FP), R12
	SHLQ         $1, R12
	MOVQ         n+40(FP), CX
	VBROADCASTSS scale+48(FP), Y12

	// Eight positions per pass while eight are left: twice the independent
	// chains of fused multiply-adds of a pass of four, each position's chain
	// and reduction exactly those of the pass of four, so its score is the
	// same bits either way. One pointer walks the rows: row p is at
	// DX + p·stride.
s8:
	CMPQ CX, $8
	JLT  s4

	// The eight key rows 16 positions on and the value rows at the same
	// positions, as in the pass of four.
	IMUL3Q $16, R13, AX
	ADDQ   BX, AX
	MOVQ   vdelta+56(FP), DX
	MOVQ   $8, R11

s8pfrow:
	LEAQ (AX)(DX*1), R8
	XORQ R10, R10

s8pfline:
	PREFETCHT0 (AX)(R10*1)
	PREFETCHT0 (R8)(R10*1)
	ADDQ       $64, R10
	CMPQ       R10, R12
	JLT        s8pfline
	ADDQ       R13, AX
	DECQ       R11
	JNZ        s8pfrow

	LEAQ   (R13)(R13*2), R9
	LEAQ   (R13)(R13*4), R8
	LEAQ   (R9)(R13*4), R11
	MOVQ   BX, DX
	LEAQ   (BX)(R12*1), R10
	MOVQ   SI, AX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7

s8loop:
	VMOVUPS     (AX), Y8
	VCVTPH2PS   (DX), Y9
	VCVTPH2PS   (DX)(R13*1), Y10
	VCVTPH2PS   (DX)(R13*2), Y11
	VCVTPH2PS   (DX)(R9*1), Y13
	VFMADD231PS Y8, Y9, Y0
	VFMADD231PS Y8, Y10, Y1
	VFMADD231PS Y8, Y11, Y2
	VFMADD231PS Y8, Y13, Y3
	VCVTPH2PS   (DX)(R13*4), Y14
	VCVTPH2PS   (DX)(R8*1), Y15
	VCVTPH2PS   (DX)(R9*2), Y9
	VCVTPH2PS   (DX)(R11*1), Y10
	VFMADD231PS Y8, Y14, Y4
	VFMADD231PS Y8, Y15, Y5
	VFMADD231PS Y8, Y9, Y6
	VFMADD231PS Y8, Y10, Y7
	ADDQ        $32, AX
	ADDQ        $16, DX
	CMPQ        DX, R10
	JLT         s8loop

	VHADDPS      Y1, Y0, Y0
	VHADDPS      Y3, Y2, Y2
	VHADDPS      Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VMULPS       X12, X0, X0
	VMOVUPS      X0, (DI)
	VHADDPS      Y5, Y4, Y4
	VHADDPS      Y7, Y6, Y6
	VHADDPS      Y6, Y4, Y4
	VEXTRACTF128 $1, Y4, X5
	VADDPS       X5, X4, X4
	VMULPS       X12, X4, X4
	VMOVUPS      X4, 16(DI)
	ADDQ         $32, DI
	LEAQ         (BX)(R13*8), BX
	SUBQ         $8, CX
	JMP          s8

s4:
	CMPQ CX, $4
	JLT  s1

	// Ask for the four key rows 16 positions on, then the value rows at
	// the same positions (vdelta bytes from the keys), which the weighted
	// sum reads next; as PREFETCH_ROWS does for the grouped kernels.
	IMUL3Q $16, R13, AX
	ADDQ   BX, AX
	LEAQ   (AX)(R13*1), DX
	LEAQ   (DX)(R13*1), R8
	LEAQ   (R8)(R13*1), R9
	MOVQ   $2, R11

s4pf:
	XORQ R10, R10

s4pfrow:
	PREFETCHT0 (AX)(R10*1)
	PREFETCHT0 (DX)(R10*1)
	PREFETCHT0 (R8)(R10*1)
	PREFETCHT0 (R9)(R10*1)
	ADDQ       $64, R10
	CMPQ       R10, R12
	JLT        s4pfrow
	MOVQ       vdelta+56(FP), R10
	ADDQ       R10, AX
	ADDQ       R10, DX
	ADDQ       R10, R8
	ADDQ       R10, R9
	DECQ       R11
	JNZ        s4pf

	LEAQ   (BX)(R13*1), DX
	LEAQ   (DX)(R13*1), R8
	LEAQ   (R8)(R13*1), R9
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ   R10, R10

s4loop:
	VMOVUPS     (SI)(R10*2), Y8
	VCVTPH2PS   (BX)(R10*1), Y4
	VCVTPH2PS   (DX)(R10*1), Y5
	VCVTPH2PS   (R8)(R10*1), Y6
	VCVTPH2PS   (R9)(R10*1), Y7
	VFMADD231PS Y8, Y4, Y0
	VFMADD231PS Y8, Y5, Y1
	VFMADD231PS Y8, Y6, Y2
	VFMADD231PS Y8, Y7, Y3
	ADDQ        $16, R10
	CMPQ        R10, R12
	JLT         s4loop

	// Per 128-bit half: the sums of positions 0…3 in lanes 0…3.
	VHADDPS      Y1, Y0, Y0
	VHADDPS      Y3, Y2, Y2
	VHADDPS      Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VMULPS       X12, X0, X0
	VMOVUPS      X0, (DI)
	ADDQ         $16, DI
	LEAQ         (R9)(R13*1), BX
	SUBQ         $4, CX
	JMP          s4

s1:
	TESTQ  CX, CX
	JEQ    sdone
	VXORPS Y0, Y0, Y0
	XORQ   R10, R10

s1loop:
	VCVTPH2PS   (BX)(R10*1), Y4
	VFMADD231PS (SI)(R10*2), Y4, Y0
	ADDQ        $16, R10
	CMPQ        R10, R12
	JLT         s1loop

	VHADDPS      Y0, Y0, Y0
	VHADDPS      Y0, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VMULPS       X12, X0, X0
	VMOVSS       X0, (DI)
	ADDQ         $4, DI
	ADDQ         R13, BX
	DECQ         CX
	JMP          s1

sdone:
	VZEROUPPER
	RET

// func attnWeightedSumF16x1AVX2(out *float32, w *float32, v *uint16, stride, hd, n int)
//
// The weighted sum of a group of one head: attnWeightedSumF16x3AVX2 would
// compute it in three lanes at once. This kernel takes two blocks of
// sixteen values per pass over the positions instead (and a last single
// block), with the same operations per value (a fused multiply-add per
// position, in position order, from zero), so its output is bit-identical
// to the grouped kernels'.
TEXT ·attnWeightedSumF16x1AVX2(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DI
	MOVQ w+8(FP), SI
	MOVQ v+16(FP), BX
	MOVQ stride+24(FP), R13
	SHLQ $1, R13
	MOVQ hd+32(FP), R12
	SHRQ $4, R12
	MOVQ n+40(FP), CX
	MOVQ R13, AX
	SHLQ $5, AX

wpair:
	CMPQ   R12, $2
	JLT    wsingle
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	MOVQ   BX, DX
	XORQ   R10, R10

wpairpos:
	PREFETCHT0   (DX)(AX*1)
	VBROADCASTSS (SI)(R10*4), Y10
	VCVTPH2PS    (DX), Y4
	VCVTPH2PS    16(DX), Y5
	VCVTPH2PS    32(DX), Y6
	VCVTPH2PS    48(DX), Y7
	VFMADD231PS  Y10, Y4, Y0
	VFMADD231PS  Y10, Y5, Y1
	VFMADD231PS  Y10, Y6, Y2
	VFMADD231PS  Y10, Y7, Y3
	ADDQ         R13, DX
	INCQ         R10
	CMPQ         R10, CX
	JLT          wpairpos

	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ    $128, DI
	ADDQ    $64, BX
	SUBQ    $2, R12
	JMP     wpair

wsingle:
	TESTQ  R12, R12
	JEQ    wdone
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	MOVQ   BX, DX
	XORQ   R10, R10

wsinglepos:
	PREFETCHT0   (DX)(AX*1)
	VBROADCASTSS (SI)(R10*4), Y10
	VCVTPH2PS    (DX), Y4
	VCVTPH2PS    16(DX), Y5
	VFMADD231PS  Y10, Y4, Y0
	VFMADD231PS  Y10, Y5, Y1
	ADDQ         R13, DX
	INCQ         R10
	CMPQ         R10, CX
	JLT          wsinglepos

	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)

wdone:
	VZEROUPPER
	RET
