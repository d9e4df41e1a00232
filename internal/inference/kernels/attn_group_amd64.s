//go:build !purego

#include "textflag.h"

// Grouped attention over a half-precision KV cache: four query heads per
// pass, each cached row converted once with VCVTPH2PS and used by all four.
// Every head gets the same sequence of operations whichever lane it is in
// and whether its position is handled in a pair or alone, so a head's result
// depends only on its own query and the cache. The callers guarantee n ≥ 1
// and a head size that is a multiple of sixteen.

// HSUM4 leaves in the low lane of each 128-bit half of A the per-half sums
// of the accumulators A, B, C, D (lanes: A, B, C, D). Clobbers C.
#define HSUM4(A, B, C, D) \
	VHADDPS B, A, A \
	VHADDPS D, C, C \
	VHADDPS C, A, A

// STORE4(X, OFF) writes the four lanes of X to OFF(DI), OFF(DI)(AX*1),
// OFF(DI)(R10*1) and OFF(DI)(DX*1).
#define STORE4(X, OFF) \
	VMOVSS     X, OFF(DI) \
	VEXTRACTPS $1, X, OFF(DI)(AX*1) \
	VEXTRACTPS $2, X, OFF(DI)(R10*1) \
	VEXTRACTPS $3, X, OFF(DI)(DX*1)

// PREFETCH_ROWS(VDELTA) asks for the cache lines of the two key rows
// PF_AHEAD rows after BX (the rows of the pair PF_AHEAD/2 pairs on) and of
// the value rows at the same positions, VDELTA bytes from the keys: the
// cache of a sequence is usually cold in a batched step (ten sequences'
// caches are several times the L3 cache), and the weighted sum that reads
// the values comes right after the scores, so it finds them in L2. Eight
// pairs ahead is some 300 cycles of a hot pair loop, about a memory
// latency; 0, 16 and 48 rows measured alike within the noise of the shared
// machine on the model's contiguous rows, and 16 beat 8 on strided ones. Clobbers AX, DX and R10; BX points at a row of R12 bytes, R13
// apart.
#define PF_AHEAD 16
#define PREFETCH_ROWS(VDELTA) \
	MOVQ       R13, AX \
	IMULQ      $PF_AHEAD, AX \
	ADDQ       BX, AX \
	MOVQ       VDELTA, DX \
	ADDQ       AX, DX \
	XORQ       R10, R10 \
pfrow: \
	PREFETCHT0 (AX)(R10*1) \
	PREFETCHT0 (DX)(R10*1) \
	ADDQ       R13, AX \
	ADDQ       R13, DX \
	PREFETCHT0 (AX)(R10*1) \
	PREFETCHT0 (DX)(R10*1) \
	SUBQ       R13, AX \
	SUBQ       R13, DX \
	ADDQ       $64, R10 \
	CMPQ       R10, R12 \
	JLT        pfrow

// func attnScoresF16x4AVX2(out *float32, o1, o2, o3 int, q0, q1, q2, q3 *float32, k *uint16, stride, hd, n int, scale float32, vdelta int)
TEXT ·attnScoresF16x4AVX2(SB), NOSPLIT, $0-112
	MOVQ         out+0(FP), DI
	MOVQ         q0+32(FP), SI
	MOVQ         q1+40(FP), R8
	MOVQ         q2+48(FP), R9
	MOVQ         q3+56(FP), R11
	MOVQ         k+64(FP), BX
	MOVQ         stride+72(FP), R13
	SHLQ         $1, R13
	MOVQ         hd+80(FP), R12
	SHLQ         $1, R12
	MOVQ         n+88(FP), CX
	VBROADCASTSS scale+96(FP), Y12

	// Two positions at a time share each load of the four query rows.
sp2:
	CMPQ   CX, $2
	JLT    sp1
	PREFETCH_ROWS(vdelta+104(FP))
	LEAQ   (BX)(R13*1), DX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	XORQ   R10, R10

sp2loop:
	VCVTPH2PS   (BX)(R10*1), Y8
	VCVTPH2PS   (DX)(R10*1), Y9
	VMOVUPS     (SI)(R10*2), Y10
	VFMADD231PS Y10, Y8, Y0
	VFMADD231PS Y10, Y9, Y4
	VMOVUPS     (R8)(R10*2), Y11
	VFMADD231PS Y11, Y8, Y1
	VFMADD231PS Y11, Y9, Y5
	VMOVUPS     (R9)(R10*2), Y10
	VFMADD231PS Y10, Y8, Y2
	VFMADD231PS Y10, Y9, Y6
	VMOVUPS     (R11)(R10*2), Y11
	VFMADD231PS Y11, Y8, Y3
	VFMADD231PS Y11, Y9, Y7
	ADDQ        $16, R10
	CMPQ        R10, R12
	JLT         sp2loop

	HSUM4(Y0, Y1, Y2, Y3)
	HSUM4(Y4, Y5, Y6, Y7)
	VPERM2F128 $0x20, Y4, Y0, Y1 // low halves of the two positions
	VPERM2F128 $0x31, Y4, Y0, Y2 // high halves
	VADDPS     Y2, Y1, Y1
	VMULPS     Y12, Y1, Y1
	MOVQ       o1+8(FP), AX
	MOVQ       o2+16(FP), R10
	MOVQ       o3+24(FP), DX
	STORE4(X1, 0)
	VEXTRACTF128 $1, Y1, X2
	STORE4(X2, 4)
	ADDQ       $8, DI
	LEAQ       (BX)(R13*2), BX
	SUBQ       $2, CX
	JMP        sp2

sp1:
	TESTQ  CX, CX
	JEQ    spdone
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ   R10, R10

sp1loop:
	VCVTPH2PS   (BX)(R10*1), Y8
	VFMADD231PS (SI)(R10*2), Y8, Y0
	VFMADD231PS (R8)(R10*2), Y8, Y1
	VFMADD231PS (R9)(R10*2), Y8, Y2
	VFMADD231PS (R11)(R10*2), Y8, Y3
	ADDQ        $16, R10
	CMPQ        R10, R12
	JLT         sp1loop

	HSUM4(Y0, Y1, Y2, Y3)
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VMULPS       X12, X0, X0
	MOVQ         o1+8(FP), AX
	MOVQ         o2+16(FP), R10
	MOVQ         o3+24(FP), DX
	STORE4(X0, 0)

spdone:
	VZEROUPPER
	RET

// func attnWeightedSumF16x4AVX2(out *float32, o1, o2, o3 int, w0, w1, w2, w3 *float32, v *uint16, stride, hd, n int)
TEXT ·attnWeightedSumF16x4AVX2(SB), NOSPLIT, $0-96
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

	// Sixteen values of the four heads per pass over the positions.
wsblock:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	MOVQ   BX, DX
	XORQ   R10, R10
	MOVQ   R13, AX
	SHLQ   $5, AX

	// Each position also asks for the same part of the row 32 positions on
	// (see PREFETCH_ROWS); only the first block's pass misses.
wspos:
	PREFETCHT0   (DX)(AX*1)
	VCVTPH2PS    (DX), Y8
	VCVTPH2PS    16(DX), Y9
	VBROADCASTSS (SI)(R10*4), Y10
	VFMADD231PS  Y10, Y8, Y0
	VFMADD231PS  Y10, Y9, Y1
	VBROADCASTSS (R8)(R10*4), Y11
	VFMADD231PS  Y11, Y8, Y2
	VFMADD231PS  Y11, Y9, Y3
	VBROADCASTSS (R9)(R10*4), Y10
	VFMADD231PS  Y10, Y8, Y4
	VFMADD231PS  Y10, Y9, Y5
	VBROADCASTSS (R11)(R10*4), Y11
	VFMADD231PS  Y11, Y8, Y6
	VFMADD231PS  Y11, Y9, Y7
	ADDQ         R13, DX
	INCQ         R10
	CMPQ         R10, CX
	JLT          wspos

	MOVQ    o1+8(FP), AX
	VMOVUPS Y2, (DI)(AX*1)
	VMOVUPS Y3, 32(DI)(AX*1)
	MOVQ    o2+16(FP), AX
	VMOVUPS Y4, (DI)(AX*1)
	VMOVUPS Y5, 32(DI)(AX*1)
	MOVQ    o3+24(FP), AX
	VMOVUPS Y6, (DI)(AX*1)
	VMOVUPS Y7, 32(DI)(AX*1)
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ    $64, DI
	ADDQ    $32, BX
	DECQ    R12
	JNZ     wsblock

	VZEROUPPER
	RET

// func floatsToHalvesF16C(dst *uint16, src *float32, n int)
TEXT ·floatsToHalvesF16C(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX

fh8:
	VMOVUPS   (SI), Y0
	VCVTPS2PH $0, Y0, (DI)
	ADDQ      $32, SI
	ADDQ      $16, DI
	SUBQ      $8, CX
	JNZ       fh8

	VZEROUPPER
	RET

// STORE3(X, OFF) writes the three low lanes of X to OFF(DI), OFF(DI)(AX*1)
// and OFF(DI)(DX*1).
#define STORE3(X, OFF) \
	VMOVSS     X, OFF(DI) \
	VEXTRACTPS $1, X, OFF(DI)(AX*1) \
	VEXTRACTPS $2, X, OFF(DI)(DX*1)

// FINISH3(Y, X, T) adds the two 128-bit halves of the per-half sums in Y
// (into its low half X, with T's low half as scratch) and scales them by
// Y13.
#define FINISH3(Y, X, T) \
	VEXTRACTF128 $1, Y, T \
	VADDPS       T, X, X \
	VMULPS       X13, X, X

// func attnScoresF16x3AVX2(out *float32, o1, o2 int, q0, q1, q2 *float32, k *uint16, stride, hd, n int, scale float32, vdelta int)
//
// The three-head variant of attnScoresF16x4AVX2 (groups of three, and the
// last three heads of a group of seven), three positions at a time. The
// reduction is the four-lane one with the third head in two lanes, so each
// head's arithmetic is the same in both kernels.
TEXT ·attnScoresF16x3AVX2(SB), NOSPLIT, $0-96
	MOVQ         out+0(FP), DI
	MOVQ         q0+24(FP), SI
	MOVQ         q1+32(FP), R8
	MOVQ         q2+40(FP), R9
	MOVQ         k+48(FP), BX
	MOVQ         stride+56(FP), R13
	SHLQ         $1, R13
	MOVQ         hd+64(FP), R12
	SHLQ         $1, R12
	MOVQ         n+72(FP), CX
	VBROADCASTSS scale+80(FP), Y13

t3:
	CMPQ   CX, $3
	JLT    t1

	// Ask for the three key and value rows 24 positions on (see
	// PREFETCH_ROWS).
	IMUL3Q $24, R13, AX
	ADDQ   BX, AX
	MOVQ   vdelta+88(FP), R11
	ADDQ   AX, R11
	XORQ   R10, R10

t3pf:
	PREFETCHT0 (AX)(R10*1)
	PREFETCHT0 (R11)(R10*1)
	ADDQ       R13, AX
	ADDQ       R13, R11
	PREFETCHT0 (AX)(R10*1)
	PREFETCHT0 (R11)(R10*1)
	ADDQ       R13, AX
	ADDQ       R13, R11
	PREFETCHT0 (AX)(R10*1)
	PREFETCHT0 (R11)(R10*1)
	SUBQ       R13, AX
	SUBQ       R13, AX
	SUBQ       R13, R11
	SUBQ       R13, R11
	ADDQ       $64, R10
	CMPQ       R10, R12
	JLT        t3pf

	LEAQ   (BX)(R13*1), DX
	LEAQ   (DX)(R13*1), R11
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	XORQ   R10, R10

t3loop:
	VCVTPH2PS   (BX)(R10*1), Y9
	VCVTPH2PS   (DX)(R10*1), Y10
	VCVTPH2PS   (R11)(R10*1), Y11
	VMOVUPS     (SI)(R10*2), Y12
	VFMADD231PS Y12, Y9, Y0
	VFMADD231PS Y12, Y10, Y3
	VFMADD231PS Y12, Y11, Y6
	VMOVUPS     (R8)(R10*2), Y12
	VFMADD231PS Y12, Y9, Y1
	VFMADD231PS Y12, Y10, Y4
	VFMADD231PS Y12, Y11, Y7
	VMOVUPS     (R9)(R10*2), Y12
	VFMADD231PS Y12, Y9, Y2
	VFMADD231PS Y12, Y10, Y5
	VFMADD231PS Y12, Y11, Y8
	ADDQ        $16, R10
	CMPQ        R10, R12
	JLT         t3loop

	HSUM4(Y0, Y1, Y2, Y2)
	HSUM4(Y3, Y4, Y5, Y5)
	HSUM4(Y6, Y7, Y8, Y8)
	FINISH3(Y0, X0, X1)
	FINISH3(Y3, X3, X4)
	FINISH3(Y6, X6, X7)
	MOVQ o1+8(FP), AX
	MOVQ o2+16(FP), DX
	STORE3(X0, 0)
	STORE3(X3, 4)
	STORE3(X6, 8)
	ADDQ $12, DI
	LEAQ (R11)(R13*1), BX
	SUBQ $3, CX
	JMP  t3

t1:
	TESTQ  CX, CX
	JEQ    t3done
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	XORQ   R10, R10

t1loop:
	VCVTPH2PS   (BX)(R10*1), Y9
	VFMADD231PS (SI)(R10*2), Y9, Y0
	VFMADD231PS (R8)(R10*2), Y9, Y1
	VFMADD231PS (R9)(R10*2), Y9, Y2
	ADDQ        $16, R10
	CMPQ        R10, R12
	JLT         t1loop

	HSUM4(Y0, Y1, Y2, Y2)
	FINISH3(Y0, X0, X1)
	MOVQ o1+8(FP), AX
	MOVQ o2+16(FP), DX
	STORE3(X0, 0)
	ADDQ $4, DI
	ADDQ R13, BX
	DECQ CX
	JMP  t1

t3done:
	VZEROUPPER
	RET

// func attnWeightedSumF16x3AVX2(out *float32, o1, o2 int, w0, w1, w2 *float32, v *uint16, stride, hd, n int)
//
// The three-head variant of attnWeightedSumF16x4AVX2, with the same
// arithmetic per head.
TEXT ·attnWeightedSumF16x3AVX2(SB), NOSPLIT, $0-80
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

vblock:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	MOVQ   BX, DX
	XORQ   R10, R10
	MOVQ   R13, AX
	SHLQ   $5, AX

vpos:
	PREFETCHT0   (DX)(AX*1)
	VCVTPH2PS    (DX), Y8
	VCVTPH2PS    16(DX), Y9
	VBROADCASTSS (SI)(R10*4), Y10
	VFMADD231PS  Y10, Y8, Y0
	VFMADD231PS  Y10, Y9, Y1
	VBROADCASTSS (R8)(R10*4), Y11
	VFMADD231PS  Y11, Y8, Y2
	VFMADD231PS  Y11, Y9, Y3
	VBROADCASTSS (R9)(R10*4), Y10
	VFMADD231PS  Y10, Y8, Y4
	VFMADD231PS  Y10, Y9, Y5
	ADDQ         R13, DX
	INCQ         R10
	CMPQ         R10, CX
	JLT          vpos

	MOVQ    o1+8(FP), AX
	VMOVUPS Y2, (DI)(AX*1)
	VMOVUPS Y3, 32(DI)(AX*1)
	MOVQ    o2+16(FP), AX
	VMOVUPS Y4, (DI)(AX*1)
	VMOVUPS Y5, 32(DI)(AX*1)
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ    $64, DI
	ADDQ    $32, BX
	DECQ    R12
	JNZ     vblock

	VZEROUPPER
	RET
