//go:build !purego

#include "textflag.h"

// AVX-512 attention scores over a half-precision KV cache (the avx512
// family, chosen with the wide weighted sums). A pass takes one, two or
// three query heads of a KV group over blocks of eight positions: each key
// row is converted sixteen values at a time with VCVTPH2PS and multiplied
// into one sixteen-lane accumulator per (position, head), and the eight
// accumulators of a head are then reduced together by a transposed
// shuffle-and-add tree that leaves the eight position sums in one register,
// instead of a horizontal sum per position.
//
// Every score is the same sequence of operations: lane i of its
// accumulator is the chain of fused multiply-adds q[16c+i]·k[16c+i] for
// c = 0, 1, … from zero, and the tree adds lane i to lane i+8, then those
// sums four apart, two apart and one apart, then scales. That sequence
// depends neither on the position's place in its block nor on the other
// heads of the pass, so a head's scores are the same bits alone or in any
// group, and the same for every position of a span: the last, partial
// block runs the same code with the missing rows masked off (their loads
// suppressed and their sums not stored), not a different kernel. The
// scores differ in the last bits from the AVX2 kernels', which sum eight
// lanes per chain; a CPU runs one family for all its sequences, so decode
// stays batch-invariant. The callers guarantee n ≥ 1 and a head size that
// is a multiple of sixteen.

// The lane order that turns the tree's last step into positions 0…7 in
// the low half and their partners in the high half (see RED8).
DATA redperm<>+0(SB)/4, $0
DATA redperm<>+4(SB)/4, $4
DATA redperm<>+8(SB)/4, $8
DATA redperm<>+12(SB)/4, $12
DATA redperm<>+16(SB)/4, $2
DATA redperm<>+20(SB)/4, $6
DATA redperm<>+24(SB)/4, $10
DATA redperm<>+28(SB)/4, $14
DATA redperm<>+32(SB)/4, $1
DATA redperm<>+36(SB)/4, $5
DATA redperm<>+40(SB)/4, $9
DATA redperm<>+44(SB)/4, $13
DATA redperm<>+48(SB)/4, $3
DATA redperm<>+52(SB)/4, $7
DATA redperm<>+56(SB)/4, $11
DATA redperm<>+60(SB)/4, $15
GLOBL redperm<>(SB), RODATA|NOPTR, $64

// RED8 reduces the accumulators a0…a7 of positions 0…7 into the eight
// scaled sums in yout (the low half of a0), with Z24 and Z25 as scratch,
// the lane order of redperm in Z26 and the scale in Y27. Step one adds the
// 256-bit halves of each accumulator (two positions per register), step
// two the 128-bit quarters (four positions per register), step three the
// 64-bit pairs within each quarter (all eight in one register, two
// partial sums each), and the last step puts each pair of partial sums
// eight lanes apart and adds the halves.
#define RED8(a0, a1, a2, a3, a4, a5, a6, a7, yout) \
	VSHUFF64X2    $0x44, a1, a0, Z24 \
	VSHUFF64X2    $0xEE, a1, a0, Z25 \
	VADDPS        Z25, Z24, a0 \
	VSHUFF64X2    $0x44, a3, a2, Z24 \
	VSHUFF64X2    $0xEE, a3, a2, Z25 \
	VADDPS        Z25, Z24, a2 \
	VSHUFF64X2    $0x44, a5, a4, Z24 \
	VSHUFF64X2    $0xEE, a5, a4, Z25 \
	VADDPS        Z25, Z24, a4 \
	VSHUFF64X2    $0x44, a7, a6, Z24 \
	VSHUFF64X2    $0xEE, a7, a6, Z25 \
	VADDPS        Z25, Z24, a6 \
	VSHUFF32X4    $0x88, a2, a0, Z24 \
	VSHUFF32X4    $0xDD, a2, a0, Z25 \
	VADDPS        Z25, Z24, a0 \
	VSHUFF32X4    $0x88, a6, a4, Z24 \
	VSHUFF32X4    $0xDD, a6, a4, Z25 \
	VADDPS        Z25, Z24, a4 \
	VUNPCKLPD     a4, a0, Z24 \
	VUNPCKHPD     a4, a0, Z25 \
	VADDPS        Z25, Z24, a0 \
	VPERMPS       a0, Z26, Z24 \
	VEXTRACTF64X4 $1, Z24, Y25 \
	VADDPS        Y25, Y24, yout \
	VMULPS        Y27, yout, yout

// FMA4 multiplies the query part q into the accumulators a0…a3 of the four
// key rows converted in Z24…Z27.
#define FMA4(q, a0, a1, a2, a3) \
	VFMADD231PS q, Z24, a0 \
	VFMADD231PS q, Z25, a1 \
	VFMADD231PS q, Z26, a2 \
	VFMADD231PS q, Z27, a3

// ZERO8 clears eight accumulators.
#define ZERO8(a0, a1, a2, a3, a4, a5, a6, a7) \
	VPXORD a0, a0, a0 \
	VPXORD a1, a1, a1 \
	VPXORD a2, a2, a2 \
	VPXORD a3, a3, a3 \
	VPXORD a4, a4, a4 \
	VPXORD a5, a5, a5 \
	VPXORD a6, a6, a6 \
	VPXORD a7, a7, a7

// CVT_LO and CVT_HI convert sixteen values of rows 0…3 (from BX) and 4…7
// (from DX) of the block into Z24…Z27; R13 is the row stride and R11
// three strides in bytes. Rows 1…7 load under the masks K1…K7: all ones
// in full blocks, and zero for the rows past the span in the last one,
// whose loads are then suppressed (they may lie past the cache).
#define CVT_LO \
	VCVTPH2PS   (BX), Z24 \
	VCVTPH2PS.Z (BX)(R13*1), K1, Z25 \
	VCVTPH2PS.Z (BX)(R13*2), K2, Z26 \
	VCVTPH2PS.Z (BX)(R11*1), K3, Z27

#define CVT_HI \
	VCVTPH2PS.Z (DX), K4, Z24 \
	VCVTPH2PS.Z (DX)(R13*1), K5, Z25 \
	VCVTPH2PS.Z (DX)(R13*2), K6, Z26 \
	VCVTPH2PS.Z (DX)(R11*1), K7, Z27

// SETUP turns the stride in R13 into bytes (and three strides in R11) and
// the head size in R12 into the bytes of a key row, and sets the row masks
// K1…K7 to all ones. AX holds the first key row and CX the positions.
#define SETUP \
	SHLQ   $1, R13 \
	IMUL3Q $3, R13, R11 \
	SHLQ   $1, R12 \
	KXNORW K1, K1, K1 \
	KMOVW  K1, K2 \
	KMOVW  K1, K3 \
	KMOVW  K1, K4 \
	KMOVW  K1, K5 \
	KMOVW  K1, K6 \
	KMOVW  K1, K7

// TAILMASKS sets K1…K7 for a last block of CX < 8 positions: row i loads
// only when i < CX. Clobbers BX and DX.
#define TAILMASK(i, k) \
	MOVL  BX, DX \
	SHRL  $i, DX \
	ANDL  $1, DX \
	NEGL  DX \
	KMOVW DX, k

#define TAILMASKS \
	MOVL $1, BX \
	SHLL CX, BX \
	DECL BX \
	TAILMASK(1, K1) \
	TAILMASK(2, K2) \
	TAILMASK(3, K3) \
	TAILMASK(4, K4) \
	TAILMASK(5, K5) \
	TAILMASK(6, K6) \
	TAILMASK(7, K7)

// STOREMASK sets K1 to the low CX lanes, for the stores of a last block.
#define STOREMASK \
	MOVL  $1, BX \
	SHLL  CX, BX \
	DECL  BX \
	KMOVW BX, K1

// PREFETCH8(VDELTA) asks for the eight key rows sixteen positions after AX
// (two blocks on) and the value rows at the same positions, VDELTA bytes
// from the keys, as the AVX2 kernels do: the weighted sum reads the values
// right after the scores. Clobbers BX, DX, R10 and R14.
#define PREFETCH8(VDELTA) \
	MOVQ       R13, BX \
	SHLQ       $4, BX \
	ADDQ       AX, BX \
	MOVQ       VDELTA, DX \
	ADDQ       BX, DX \
	MOVQ       $8, R14 \
pfrow: \
	XORQ       R10, R10 \
pfline: \
	PREFETCHT0 (BX)(R10*1) \
	PREFETCHT0 (DX)(R10*1) \
	ADDQ       $64, R10 \
	CMPQ       R10, R12 \
	JLT        pfline \
	ADDQ       R13, BX \
	ADDQ       R13, DX \
	DECQ       R14 \
	JNZ        pfrow

// BLOCK_START begins a block at AX: BX and DX at rows 0 and 4, R10 (the
// offset into the key rows; the queries are at twice it) zero.
#define BLOCK_START \
	MOVQ AX, BX \
	LEAQ (AX)(R13*4), DX \
	XORQ R10, R10

#define BLOCK_STEP \
	ADDQ $32, BX \
	ADDQ $32, DX \
	ADDQ $32, R10 \
	CMPQ R10, R12

// REDUCE_SETUP loads the lane order and the scale for RED8.
#define REDUCE_SETUP(SCALE) \
	VMOVDQU32    redperm<>(SB), Z26 \
	VBROADCASTSS SCALE, Y27

// func attnScoresF16x3AVX512(out *float32, o1, o2 int, q0, q1, q2 *float32, k *uint16, stride, hd, n int, scale float32, vdelta int)
//
// Three heads: 24 accumulators (Z0…Z23), the block's rows converted four at
// a time (Z24…Z27) and the three query parts in Z28…Z30.
TEXT ·attnScoresF16x3AVX512(SB), NOSPLIT, $0-96
	MOVQ out+0(FP), DI
	MOVQ q0+24(FP), SI
	MOVQ q1+32(FP), R8
	MOVQ q2+40(FP), R9
	MOVQ k+48(FP), AX
	MOVQ stride+56(FP), R13
	MOVQ hd+64(FP), R12
	MOVQ n+72(FP), CX
	SETUP

z3block:
	CMPQ  CX, $8
	JGE   z3full
	TAILMASKS

z3full:
	PREFETCH8(vdelta+88(FP))
	ZERO8(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	ZERO8(Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15)
	ZERO8(Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23)
	BLOCK_START

z3loop:
	VMOVUPS (SI)(R10*2), Z28
	VMOVUPS (R8)(R10*2), Z29
	VMOVUPS (R9)(R10*2), Z30
	CVT_LO
	FMA4(Z28, Z0, Z1, Z2, Z3)
	FMA4(Z29, Z8, Z9, Z10, Z11)
	FMA4(Z30, Z16, Z17, Z18, Z19)
	CVT_HI
	FMA4(Z28, Z4, Z5, Z6, Z7)
	FMA4(Z29, Z12, Z13, Z14, Z15)
	FMA4(Z30, Z20, Z21, Z22, Z23)
	BLOCK_STEP
	JLT     z3loop

	REDUCE_SETUP(scale+80(FP))
	RED8(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Y0)
	RED8(Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15, Y8)
	RED8(Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23, Y16)
	MOVQ    o1+8(FP), BX
	MOVQ    o2+16(FP), DX
	CMPQ    CX, $8
	JLT     z3tail
	VMOVUPS Y0, (DI)
	VMOVUPS Y8, (DI)(BX*1)
	VMOVUPS Y16, (DI)(DX*1)
	ADDQ    $32, DI
	LEAQ    (AX)(R13*8), AX
	SUBQ    $8, CX
	JNZ     z3block
	VZEROUPPER
	RET

z3tail:
	MOVQ    BX, R10
	STOREMASK
	VMOVUPS Y0, K1, (DI)
	VMOVUPS Y8, K1, (DI)(R10*1)
	VMOVUPS Y16, K1, (DI)(DX*1)
	VZEROUPPER
	RET

// func attnScoresF16x2AVX512(out *float32, o1 int, q0, q1 *float32, k *uint16, stride, hd, n int, scale float32, vdelta int)
//
// Two heads: 16 accumulators (Z0…Z15), the rows in Z24…Z27 four at a time,
// the query parts in Z28 and Z29.
TEXT ·attnScoresF16x2AVX512(SB), NOSPLIT, $0-80
	MOVQ out+0(FP), DI
	MOVQ q0+16(FP), SI
	MOVQ q1+24(FP), R8
	MOVQ k+32(FP), AX
	MOVQ stride+40(FP), R13
	MOVQ hd+48(FP), R12
	MOVQ n+56(FP), CX
	SETUP

z2block:
	CMPQ  CX, $8
	JGE   z2full
	TAILMASKS

z2full:
	PREFETCH8(vdelta+72(FP))
	ZERO8(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	ZERO8(Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15)
	BLOCK_START

z2loop:
	VMOVUPS (SI)(R10*2), Z28
	VMOVUPS (R8)(R10*2), Z29
	CVT_LO
	FMA4(Z28, Z0, Z1, Z2, Z3)
	FMA4(Z29, Z8, Z9, Z10, Z11)
	CVT_HI
	FMA4(Z28, Z4, Z5, Z6, Z7)
	FMA4(Z29, Z12, Z13, Z14, Z15)
	BLOCK_STEP
	JLT     z2loop

	REDUCE_SETUP(scale+64(FP))
	RED8(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Y0)
	RED8(Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15, Y8)
	MOVQ    o1+8(FP), R9
	CMPQ    CX, $8
	JLT     z2tail
	VMOVUPS Y0, (DI)
	VMOVUPS Y8, (DI)(R9*1)
	ADDQ    $32, DI
	LEAQ    (AX)(R13*8), AX
	SUBQ    $8, CX
	JNZ     z2block
	VZEROUPPER
	RET

z2tail:
	STOREMASK
	VMOVUPS Y0, K1, (DI)
	VMOVUPS Y8, K1, (DI)(R9*1)
	VZEROUPPER
	RET

// func attnScoresF16x1AVX512(out *float32, q *float32, k *uint16, stride, hd, n int, scale float32, vdelta int)
//
// One head (multi-head attention): 8 accumulators (Z0…Z7), the rows in
// Z24…Z27 four at a time, the query part in Z28.
TEXT ·attnScoresF16x1AVX512(SB), NOSPLIT, $0-64
	MOVQ out+0(FP), DI
	MOVQ q+8(FP), SI
	MOVQ k+16(FP), AX
	MOVQ stride+24(FP), R13
	MOVQ hd+32(FP), R12
	MOVQ n+40(FP), CX
	SETUP

z1block:
	CMPQ  CX, $8
	JGE   z1full
	TAILMASKS

z1full:
	PREFETCH8(vdelta+56(FP))
	ZERO8(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	BLOCK_START

z1loop:
	VMOVUPS (SI)(R10*2), Z28
	CVT_LO
	FMA4(Z28, Z0, Z1, Z2, Z3)
	CVT_HI
	FMA4(Z28, Z4, Z5, Z6, Z7)
	BLOCK_STEP
	JLT     z1loop

	REDUCE_SETUP(scale+48(FP))
	RED8(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Y0)
	CMPQ    CX, $8
	JLT     z1tail
	VMOVUPS Y0, (DI)
	ADDQ    $32, DI
	LEAQ    (AX)(R13*8), AX
	SUBQ    $8, CX
	JNZ     z1block
	VZEROUPPER
	RET

z1tail:
	STOREMASK
	VMOVUPS Y0, K1, (DI)
	VZEROUPPER
	RET
