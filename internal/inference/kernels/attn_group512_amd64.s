//go:build !purego

#include "textflag.h"

// The AVX-512 weighted sums of grouped attention over a half-precision KV
// cache (the avx512 family). Each output value is the same chain of fused
// multiply-adds over the positions, in the same order, as in the AVX2
// kernels of attn_group_amd64.s: only the width of a step changes (sixteen
// values per VCVTPH2PS and per FMA, sixty-four per pass over the positions,
// so a head's weight is broadcast once per position instead of four times),
// which keeps the two families bit-identical. The callers guarantee n ≥ 1
// and a head size that is a multiple of sixteen.

// func attnWeightedSumF16x4AVX512(out *float32, o1, o2, o3 int, w0, w1, w2, w3 *float32, v *uint16, stride, hd, n int)
TEXT ·attnWeightedSumF16x4AVX512(SB), NOSPLIT, $0-96
	MOVQ out+0(FP), DI
	MOVQ w0+32(FP), SI
	MOVQ w1+40(FP), R8
	MOVQ w2+48(FP), R9
	MOVQ w3+56(FP), R11
	MOVQ v+64(FP), BX
	MOVQ stride+72(FP), R13
	SHLQ $1, R13
	MOVQ hd+80(FP), R12
	SHRQ $4, R12
	MOVQ n+88(FP), CX

	// Sixty-four values of every head per pass over the positions, in
	// four accumulators per head.
z4block64:
	CMPQ R12, $4
	JLT  z4block16
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	MOVQ BX, DX
	XORQ R10, R10
	MOVQ R13, AX
	SHLQ $5, AX

z4pos64:
	PREFETCHT0   (DX)(AX*1)
	PREFETCHT0   64(DX)(AX*1)
	VCVTPH2PS    (DX), Z16
	VCVTPH2PS    32(DX), Z17
	VCVTPH2PS    64(DX), Z18
	VCVTPH2PS    96(DX), Z19
	VBROADCASTSS (SI)(R10*4), Z20
	VFMADD231PS  Z20, Z16, Z0
	VFMADD231PS  Z20, Z17, Z1
	VFMADD231PS  Z20, Z18, Z2
	VFMADD231PS  Z20, Z19, Z3
	VBROADCASTSS (R8)(R10*4), Z21
	VFMADD231PS  Z21, Z16, Z4
	VFMADD231PS  Z21, Z17, Z5
	VFMADD231PS  Z21, Z18, Z6
	VFMADD231PS  Z21, Z19, Z7
	VBROADCASTSS (R9)(R10*4), Z22
	VFMADD231PS  Z22, Z16, Z8
	VFMADD231PS  Z22, Z17, Z9
	VFMADD231PS  Z22, Z18, Z10
	VFMADD231PS  Z22, Z19, Z11
	VBROADCASTSS (R11)(R10*4), Z23
	VFMADD231PS  Z23, Z16, Z12
	VFMADD231PS  Z23, Z17, Z13
	VFMADD231PS  Z23, Z18, Z14
	VFMADD231PS  Z23, Z19, Z15
	ADDQ         R13, DX
	INCQ         R10
	CMPQ         R10, CX
	JLT          z4pos64

	MOVQ      o1+8(FP), AX
	VMOVUPS   Z4, (DI)(AX*1)
	VMOVUPS   Z5, 64(DI)(AX*1)
	VMOVUPS   Z6, 128(DI)(AX*1)
	VMOVUPS   Z7, 192(DI)(AX*1)
	MOVQ      o2+16(FP), AX
	VMOVUPS   Z8, (DI)(AX*1)
	VMOVUPS   Z9, 64(DI)(AX*1)
	VMOVUPS   Z10, 128(DI)(AX*1)
	VMOVUPS   Z11, 192(DI)(AX*1)
	MOVQ      o3+24(FP), AX
	VMOVUPS   Z12, (DI)(AX*1)
	VMOVUPS   Z13, 64(DI)(AX*1)
	VMOVUPS   Z14, 128(DI)(AX*1)
	VMOVUPS   Z15, 192(DI)(AX*1)
	VMOVUPS   Z0, (DI)
	VMOVUPS   Z1, 64(DI)
	VMOVUPS   Z2, 128(DI)
	VMOVUPS   Z3, 192(DI)
	ADDQ      $256, DI
	ADDQ      $128, BX
	SUBQ      $4, R12
	JMP       z4block64

	// The last sixteen, thirty-two or forty-eight values, sixteen per pass.
z4block16:
	TESTQ R12, R12
	JEQ   z4done
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	MOVQ BX, DX
	XORQ R10, R10
	MOVQ R13, AX
	SHLQ $5, AX

z4pos16:
	PREFETCHT0   (DX)(AX*1)
	VCVTPH2PS    (DX), Z16
	VBROADCASTSS (SI)(R10*4), Z20
	VFMADD231PS  Z20, Z16, Z0
	VBROADCASTSS (R8)(R10*4), Z21
	VFMADD231PS  Z21, Z16, Z1
	VBROADCASTSS (R9)(R10*4), Z22
	VFMADD231PS  Z22, Z16, Z2
	VBROADCASTSS (R11)(R10*4), Z23
	VFMADD231PS  Z23, Z16, Z3
	ADDQ         R13, DX
	INCQ         R10
	CMPQ         R10, CX
	JLT          z4pos16

	MOVQ      o1+8(FP), AX
	VMOVUPS   Z1, (DI)(AX*1)
	MOVQ      o2+16(FP), AX
	VMOVUPS   Z2, (DI)(AX*1)
	MOVQ      o3+24(FP), AX
	VMOVUPS   Z3, (DI)(AX*1)
	VMOVUPS   Z0, (DI)
	ADDQ      $64, DI
	ADDQ      $32, BX
	DECQ      R12
	JMP       z4block16

z4done:
	VZEROUPPER
	RET

// func attnWeightedSumF16x3AVX512(out *float32, o1, o2 int, w0, w1, w2 *float32, v *uint16, stride, hd, n int)
TEXT ·attnWeightedSumF16x3AVX512(SB), NOSPLIT, $0-80
	MOVQ out+0(FP), DI
	MOVQ w0+24(FP), SI
	MOVQ w1+32(FP), R8
	MOVQ w2+40(FP), R9
	MOVQ v+48(FP), BX
	MOVQ stride+56(FP), R13
	SHLQ $1, R13
	MOVQ hd+64(FP), R12
	SHRQ $4, R12
	MOVQ n+72(FP), CX

	// Sixty-four values of every head per pass over the positions, in
	// four accumulators per head.
z3block64:
	CMPQ R12, $4
	JLT  z3block16
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	MOVQ BX, DX
	XORQ R10, R10
	MOVQ R13, AX
	SHLQ $5, AX

z3pos64:
	PREFETCHT0   (DX)(AX*1)
	PREFETCHT0   64(DX)(AX*1)
	VCVTPH2PS    (DX), Z16
	VCVTPH2PS    32(DX), Z17
	VCVTPH2PS    64(DX), Z18
	VCVTPH2PS    96(DX), Z19
	VBROADCASTSS (SI)(R10*4), Z20
	VFMADD231PS  Z20, Z16, Z0
	VFMADD231PS  Z20, Z17, Z1
	VFMADD231PS  Z20, Z18, Z2
	VFMADD231PS  Z20, Z19, Z3
	VBROADCASTSS (R8)(R10*4), Z21
	VFMADD231PS  Z21, Z16, Z4
	VFMADD231PS  Z21, Z17, Z5
	VFMADD231PS  Z21, Z18, Z6
	VFMADD231PS  Z21, Z19, Z7
	VBROADCASTSS (R9)(R10*4), Z22
	VFMADD231PS  Z22, Z16, Z8
	VFMADD231PS  Z22, Z17, Z9
	VFMADD231PS  Z22, Z18, Z10
	VFMADD231PS  Z22, Z19, Z11
	ADDQ         R13, DX
	INCQ         R10
	CMPQ         R10, CX
	JLT          z3pos64

	MOVQ      o1+8(FP), AX
	VMOVUPS   Z4, (DI)(AX*1)
	VMOVUPS   Z5, 64(DI)(AX*1)
	VMOVUPS   Z6, 128(DI)(AX*1)
	VMOVUPS   Z7, 192(DI)(AX*1)
	MOVQ      o2+16(FP), AX
	VMOVUPS   Z8, (DI)(AX*1)
	VMOVUPS   Z9, 64(DI)(AX*1)
	VMOVUPS   Z10, 128(DI)(AX*1)
	VMOVUPS   Z11, 192(DI)(AX*1)
	VMOVUPS   Z0, (DI)
	VMOVUPS   Z1, 64(DI)
	VMOVUPS   Z2, 128(DI)
	VMOVUPS   Z3, 192(DI)
	ADDQ      $256, DI
	ADDQ      $128, BX
	SUBQ      $4, R12
	JMP       z3block64

	// The last sixteen, thirty-two or forty-eight values, sixteen per pass.
z3block16:
	TESTQ R12, R12
	JEQ   z3done
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	MOVQ BX, DX
	XORQ R10, R10
	MOVQ R13, AX
	SHLQ $5, AX

z3pos16:
	PREFETCHT0   (DX)(AX*1)
	VCVTPH2PS    (DX), Z16
	VBROADCASTSS (SI)(R10*4), Z20
	VFMADD231PS  Z20, Z16, Z0
	VBROADCASTSS (R8)(R10*4), Z21
	VFMADD231PS  Z21, Z16, Z1
	VBROADCASTSS (R9)(R10*4), Z22
	VFMADD231PS  Z22, Z16, Z2
	ADDQ         R13, DX
	INCQ         R10
	CMPQ         R10, CX
	JLT          z3pos16

	MOVQ      o1+8(FP), AX
	VMOVUPS   Z1, (DI)(AX*1)
	MOVQ      o2+16(FP), AX
	VMOVUPS   Z2, (DI)(AX*1)
	VMOVUPS   Z0, (DI)
	ADDQ      $64, DI
	ADDQ      $32, BX
	DECQ      R12
	JMP       z3block16

z3done:
	VZEROUPPER
	RET
