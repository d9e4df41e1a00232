//go:build !purego

#include "textflag.h"

// The AVX-512 weighted sum of a KV group of one query head (multi-head
// attention, as in the 15M shape), the avx512 family's counterpart of
// attnWeightedSumF16x1AVX2. The AVX2 kernel covers thirty-two values per
// pass over the positions, so a head of 48 values walks the value rows
// twice; this one covers up to sixty-four values (four zmm accumulators)
// per pass, one pass for the heads of the 15M and 135M shapes. Every
// output value is the same chain of fused multiply-adds over the
// positions, in position order from zero, as in the AVX2 kernels, so the
// two families stay bit-identical. The caller guarantees n ≥ 1 and a head
// size that is a multiple of sixteen.

// func attnWeightedSumF16x1AVX512(out *float32, w *float32, v *uint16, stride, hd, n int)
TEXT ·attnWeightedSumF16x1AVX512(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DI
	MOVQ w+8(FP), SI
	MOVQ v+16(FP), BX
	MOVQ stride+24(FP), R13
	SHLQ $1, R13
	MOVQ hd+32(FP), R12
	SHRQ $4, R12
	MOVQ n+40(FP), CX

	// The rows 32 positions on are asked for while the pass walks, as the
	// AVX2 kernel does.
	MOVQ R13, AX
	SHLQ $5, AX

next:
	CMPQ R12, $4
	JGE  pass4
	CMPQ R12, $3
	JEQ  pass3
	CMPQ R12, $2
	JEQ  pass2
	CMPQ R12, $1
	JEQ  pass1
	VZEROUPPER
	RET

pass4:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	MOVQ   BX, DX
	XORQ   R10, R10

pos4:
	PREFETCHT0   (DX)(AX*1)
	PREFETCHT0   64(DX)(AX*1)
	VBROADCASTSS (SI)(R10*4), Z8
	VCVTPH2PS    (DX), Z4
	VCVTPH2PS    32(DX), Z5
	VCVTPH2PS    64(DX), Z6
	VCVTPH2PS    96(DX), Z7
	VFMADD231PS  Z8, Z4, Z0
	VFMADD231PS  Z8, Z5, Z1
	VFMADD231PS  Z8, Z6, Z2
	VFMADD231PS  Z8, Z7, Z3
	ADDQ         R13, DX
	INCQ         R10
	CMPQ         R10, CX
	JLT          pos4

	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z2, 128(DI)
	VMOVUPS Z3, 192(DI)
	ADDQ    $256, DI
	ADDQ    $128, BX
	SUBQ    $4, R12
	JMP     next

pass3:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	MOVQ   BX, DX
	XORQ   R10, R10

pos3:
	PREFETCHT0   (DX)(AX*1)
	PREFETCHT0   64(DX)(AX*1)
	VBROADCASTSS (SI)(R10*4), Z8
	VCVTPH2PS    (DX), Z4
	VCVTPH2PS    32(DX), Z5
	VCVTPH2PS    64(DX), Z6
	VFMADD231PS  Z8, Z4, Z0
	VFMADD231PS  Z8, Z5, Z1
	VFMADD231PS  Z8, Z6, Z2
	ADDQ         R13, DX
	INCQ         R10
	CMPQ         R10, CX
	JLT          pos3

	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z2, 128(DI)
	ADDQ    $192, DI
	ADDQ    $96, BX
	SUBQ    $3, R12
	JMP     next

pass2:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	MOVQ   BX, DX
	XORQ   R10, R10

pos2:
	PREFETCHT0   (DX)(AX*1)
	VBROADCASTSS (SI)(R10*4), Z8
	VCVTPH2PS    (DX), Z4
	VCVTPH2PS    32(DX), Z5
	VFMADD231PS  Z8, Z4, Z0
	VFMADD231PS  Z8, Z5, Z1
	ADDQ         R13, DX
	INCQ         R10
	CMPQ         R10, CX
	JLT          pos2

	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	ADDQ    $128, DI
	ADDQ    $64, BX
	SUBQ    $2, R12
	JMP     next

pass1:
	VPXORD Z0, Z0, Z0
	MOVQ   BX, DX
	XORQ   R10, R10

pos1:
	PREFETCHT0   (DX)(AX*1)
	VBROADCASTSS (SI)(R10*4), Z8
	VCVTPH2PS    (DX), Z4
	VFMADD231PS  Z8, Z4, Z0
	ADDQ         R13, DX
	INCQ         R10
	CMPQ         R10, CX
	JLT          pos1

	VMOVUPS Z0, (DI)
	ADDQ    $64, DI
	ADDQ    $32, BX
	SUBQ    $1, R12
	JMP     next
