//go:build !purego

#include "textflag.h"
#include "dot_amd64.h"

// Every routine ends its YMM work with VZEROUPPER: Go's scalar float code
// is legacy SSE, and leaving dirty upper halves makes each later SSE
// instruction pay the AVX/SSE transition penalty (inference.md §7).

// hsum reduces the eight float lanes of Y0 into the low lane of X0.
#define HSUM \
	VEXTRACTF128 $1, Y0, X1 \
	VADDPS       X1, X0, X0 \
	VHADDPS      X0, X0, X0 \
	VHADDPS      X0, X0, X0

// func dotF32AVX2(a, b *float32, n int) float32
TEXT ·dotF32AVX2(SB), NOSPLIT, $0-28
	MOVQ   a+0(FP), SI
	MOVQ   b+8(FP), DI
	MOVQ   n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

f32loop32:
	CMPQ        CX, $32
	JLT         f32loop8
	VMOVUPS     (SI), Y4
	VMOVUPS     32(SI), Y5
	VMOVUPS     64(SI), Y6
	VMOVUPS     96(SI), Y7
	VFMADD231PS (DI), Y4, Y0
	VFMADD231PS 32(DI), Y5, Y1
	VFMADD231PS 64(DI), Y6, Y2
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ        $128, SI
	ADDQ        $128, DI
	SUBQ        $32, CX
	JMP         f32loop32

f32loop8:
	CMPQ        CX, $8
	JLT         f32reduce
	VMOVUPS     (SI), Y4
	VFMADD231PS (DI), Y4, Y0
	ADDQ        $32, SI
	ADDQ        $32, DI
	SUBQ        $8, CX
	JMP         f32loop8

f32reduce:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	HSUM
	TESTQ  CX, CX
	JEQ    f32done

f32tail:
	VMOVSS      (SI), X4
	VFMADD231SS (DI), X4, X0
	ADDQ        $4, SI
	ADDQ        $4, DI
	DECQ        CX
	JNZ         f32tail

f32done:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func sumF32AVX2(x *float32, n int) float32
TEXT ·sumF32AVX2(SB), NOSPLIT, $0-20
	MOVQ   x+0(FP), SI
	MOVQ   n+8(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

sumloop32:
	CMPQ   CX, $32
	JLT    sumloop8
	VADDPS (SI), Y0, Y0
	VADDPS 32(SI), Y1, Y1
	VADDPS 64(SI), Y2, Y2
	VADDPS 96(SI), Y3, Y3
	ADDQ   $128, SI
	SUBQ   $32, CX
	JMP    sumloop32

sumloop8:
	CMPQ   CX, $8
	JLT    sumreduce
	VADDPS (SI), Y0, Y0
	ADDQ   $32, SI
	SUBQ   $8, CX
	JMP    sumloop8

sumreduce:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	HSUM
	TESTQ  CX, CX
	JEQ    sumdone

sumtail:
	VADDSS (SI), X0, X0
	ADDQ   $4, SI
	DECQ   CX
	JNZ    sumtail

sumdone:
	VZEROUPPER
	MOVSS X0, ret+16(FP)
	RET

// func dotF16AVX2(w *uint16, x *float32, n int) float32
//
// Two accumulators (even and odd 8-value chunks), then one 8-value tail
// step, then a scalar tail: dotF16x4AVX2 follows exactly these steps per
// token, so the two agree bit for bit.
TEXT ·dotF16AVX2(SB), NOSPLIT, $0-28
	MOVQ   w+0(FP), SI
	MOVQ   x+8(FP), DI
	MOVQ   n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1

f16loop16:
	CMPQ        CX, $16
	JLT         f16loop8
	VCVTPH2PS   (SI), Y4
	VCVTPH2PS   16(SI), Y5
	VFMADD231PS (DI), Y4, Y0
	VFMADD231PS 32(DI), Y5, Y1
	ADDQ        $32, SI
	ADDQ        $64, DI
	SUBQ        $16, CX
	JMP         f16loop16

f16loop8:
	CMPQ        CX, $8
	JLT         f16reduce
	VCVTPH2PS   (SI), Y4
	VFMADD231PS (DI), Y4, Y0
	ADDQ        $16, SI
	ADDQ        $32, DI
	SUBQ        $8, CX

f16reduce:
	VADDPS Y1, Y0, Y0
	HSUM
	TESTQ  CX, CX
	JEQ    f16done

f16tail:
	MOVWLZX     (SI), AX
	VMOVD       AX, X4
	VCVTPH2PS   X4, X4
	VFMADD231SS (DI), X4, X0
	ADDQ        $2, SI
	ADDQ        $4, DI
	DECQ        CX
	JNZ         f16tail

f16done:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// F16X4STEP adds converted weights wv times token xr's floats at offset o
// to acc.
#define F16X4STEP(wv, xr, o, acc) \
	VFMADD231PS o(xr), wv, acc

// func dotF16x4AVX2(w *uint16, x *[4]*float32, n int, out *[4]float32)
TEXT ·dotF16x4AVX2(SB), NOSPLIT, $0-32
	MOVQ   w+0(FP), SI
	MOVQ   x+8(FP), AX
	MOVQ   0(AX), R8
	MOVQ   8(AX), R9
	MOVQ   16(AX), R10
	MOVQ   24(AX), R11
	MOVQ   n+16(FP), CX
	MOVQ   out+24(FP), DI
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7

f16x4loop16:
	CMPQ      CX, $16
	JLT       f16x4loop8
	VCVTPH2PS (SI), Y8
	VCVTPH2PS 16(SI), Y9
	F16X4STEP(Y8, R8, 0, Y0)
	F16X4STEP(Y9, R8, 32, Y1)
	F16X4STEP(Y8, R9, 0, Y2)
	F16X4STEP(Y9, R9, 32, Y3)
	F16X4STEP(Y8, R10, 0, Y4)
	F16X4STEP(Y9, R10, 32, Y5)
	F16X4STEP(Y8, R11, 0, Y6)
	F16X4STEP(Y9, R11, 32, Y7)
	ADDQ      $32, SI
	ADDQ      $64, R8
	ADDQ      $64, R9
	ADDQ      $64, R10
	ADDQ      $64, R11
	SUBQ      $16, CX
	JMP       f16x4loop16

f16x4loop8:
	CMPQ      CX, $8
	JLT       f16x4reduce
	VCVTPH2PS (SI), Y8
	F16X4STEP(Y8, R8, 0, Y0)
	F16X4STEP(Y8, R9, 0, Y2)
	F16X4STEP(Y8, R10, 0, Y4)
	F16X4STEP(Y8, R11, 0, Y6)
	ADDQ      $16, SI
	ADDQ      $32, R8
	ADDQ      $32, R9
	ADDQ      $32, R10
	ADDQ      $32, R11
	SUBQ      $8, CX

f16x4reduce:
	F16TAIL(Y0, Y1, X0, SI, R8, 0(DI), f16x4t0, f16x4t0done)
	F16TAIL(Y2, Y3, X2, SI, R9, 4(DI), f16x4t1, f16x4t1done)
	F16TAIL(Y4, Y5, X4, SI, R10, 8(DI), f16x4t2, f16x4t2done)
	F16TAIL(Y6, Y7, X6, SI, R11, 12(DI), f16x4t3, f16x4t3done)
	VZEROUPPER
	RET

// Q8BLOCK multiplies the 32 signed weight bytes in wv by the 32 activation
// bytes at xm and accumulates scale(f16 at wm) × d(at dm) × Σ into acc.
// Y15 holds int16 ones. VPMADDUBSW wants one unsigned operand, so the sign
// of w moves onto x (|w| · sign(w)·x), as ggml does.
#define Q8BLOCK(wm, wv, xm, dm, acc, t1, t2, t3) \
	MOVWLZX     wm, AX \
	VMOVD       AX, t1 \
	VCVTPH2PS   t1, t1 \
	VMULSS      dm, t1, t1 \
	VMOVDQU     xm, t2 \
	VPSIGNB     wv, t2, t2 \
	VPABSB      wv, wv \
	VPMADDUBSW  t2, wv, t2 \
	VPMADDWD    Y15, t2, t2 \
	VCVTDQ2PS   t2, t2 \
	VBROADCASTSS t1, t3 \
	VFMADD231PS t2, t3, acc

// func dotQ8_0AVX2(w *byte, x *int8, d *float32, nb int) float32
TEXT ·dotQ8_0AVX2(SB), NOSPLIT, $0-36
	MOVQ      w+0(FP), SI
	MOVQ      x+8(FP), DI
	MOVQ      d+16(FP), DX
	MOVQ      nb+24(FP), CX
	VXORPS    Y0, Y0, Y0
	VXORPS    Y7, Y7, Y7
	VPCMPEQW  Y15, Y15, Y15
	VPSRLW    $15, Y15, Y15

q8loop2:
	CMPQ    CX, $2
	JLT     q8tail
	VMOVDQU 2(SI), Y2
	VMOVDQU 36(SI), Y8
	Q8BLOCK((SI), Y2, (DI), (DX), Y0, X1, Y3, Y4)
	Q8BLOCK(34(SI), Y8, 32(DI), 4(DX), Y7, X9, Y10, Y11)
	ADDQ    $68, SI
	ADDQ    $64, DI
	ADDQ    $8, DX
	SUBQ    $2, CX
	JMP     q8loop2

q8tail:
	TESTQ   CX, CX
	JEQ     q8done
	VMOVDQU 2(SI), Y2
	Q8BLOCK((SI), Y2, (DI), (DX), Y0, X1, Y3, Y4)

q8done:
	VADDPS Y7, Y0, Y0
	HSUM
	VZEROUPPER
	MOVSS  X0, ret+32(FP)
	RET

// Q4WEIGHTS expands the 16 nibble bytes at m into 32 signed bytes in v
// (low nibbles are values 0–15, high nibbles 16–31; both offset by 8).
// Y14 holds 0x0F bytes, Y13 holds 8s.
#define Q4WEIGHTS(m, v, vx, t) \
	VMOVDQU     m, vx \
	VPSRLW      $4, vx, t \
	VINSERTI128 $1, t, v, v \
	VPAND       Y14, v, v \
	VPSUBB      Y13, v, v

// func dotQ4_0AVX2(w *byte, x *int8, d *float32, nb int) float32
TEXT ·dotQ4_0AVX2(SB), NOSPLIT, $0-36
	MOVQ         w+0(FP), SI
	MOVQ         x+8(FP), DI
	MOVQ         d+16(FP), DX
	MOVQ         nb+24(FP), CX
	VXORPS       Y0, Y0, Y0
	VXORPS       Y7, Y7, Y7
	VPCMPEQW     Y15, Y15, Y15
	VPSRLW       $15, Y15, Y15
	MOVL         $0x0f0f0f0f, AX
	VMOVD        AX, X14
	VPBROADCASTD X14, Y14
	MOVL         $0x08080808, AX
	VMOVD        AX, X13
	VPBROADCASTD X13, Y13

q4loop2:
	CMPQ CX, $2
	JLT  q4tail
	Q4WEIGHTS(2(SI), Y2, X2, X5)
	Q4WEIGHTS(20(SI), Y8, X8, X12)
	Q8BLOCK((SI), Y2, (DI), (DX), Y0, X1, Y3, Y4)
	Q8BLOCK(18(SI), Y8, 32(DI), 4(DX), Y7, X9, Y10, Y11)
	ADDQ $36, SI
	ADDQ $64, DI
	ADDQ $8, DX
	SUBQ $2, CX
	JMP  q4loop2

q4tail:
	TESTQ CX, CX
	JEQ   q4done
	Q4WEIGHTS(2(SI), Y2, X2, X5)
	Q8BLOCK((SI), Y2, (DI), (DX), Y0, X1, Y3, Y4)

q4done:
	VADDPS Y7, Y0, Y0
	HSUM
	VZEROUPPER
	MOVSS  X0, ret+32(FP)
	RET

// Q4KPAIR handles 32 nibble bytes at qm: low nibbles × x at x1 with scale
// s1, high nibbles × x at x2 with scale s2 (int16 scales in memory),
// accumulating int32 lanes into Y0. Y14 holds 0x0F bytes.
#define Q4KPAIR(qm, x1, x2, s1, s2) \
	VMOVDQU      qm, Y1 \
	VPSRLW       $4, Y1, Y2 \
	VPAND        Y14, Y1, Y1 \
	VPAND        Y14, Y2, Y2 \
	VMOVDQU      x1, Y3 \
	VMOVDQU      x2, Y4 \
	VPMADDUBSW   Y3, Y1, Y1 \
	VPMADDUBSW   Y4, Y2, Y2 \
	VPBROADCASTW s1, Y5 \
	VPBROADCASTW s2, Y6 \
	VPMADDWD     Y5, Y1, Y1 \
	VPMADDWD     Y6, Y2, Y2 \
	VPADDD       Y1, Y0, Y0 \
	VPADDD       Y2, Y0, Y0

// HSUMD reduces the eight int32 lanes of Y0 into AX.
#define HSUMD \
	VEXTRACTI128 $1, Y0, X1 \
	VPADDD       X1, X0, X0 \
	VPHADDD      X0, X0, X0 \
	VPHADDD      X0, X0, X0 \
	VMOVD        X0, AX

// func q4KBlockAVX2(qs *byte, x *int8, sc *[8]int16) int32
TEXT ·q4KBlockAVX2(SB), NOSPLIT, $0-28
	MOVQ         qs+0(FP), SI
	MOVQ         x+8(FP), DI
	MOVQ         sc+16(FP), DX
	VPXOR        Y0, Y0, Y0
	MOVL         $0x0f0f0f0f, AX
	VMOVD        AX, X14
	VPBROADCASTD X14, Y14
	Q4KPAIR((SI), (DI), 32(DI), (DX), 2(DX))
	Q4KPAIR(32(SI), 64(DI), 96(DI), 4(DX), 6(DX))
	Q4KPAIR(64(SI), 128(DI), 160(DI), 8(DX), 10(DX))
	Q4KPAIR(96(SI), 192(DI), 224(DI), 12(DX), 14(DX))
	HSUMD
	VZEROUPPER
	MOVL         AX, ret+24(FP)
	RET

// Q6KCHUNK multiplies the 32 6-bit weights in q (0..63) by x at xm; the
// low 16 products take the int8 scale at s, the high 16 the one at s+1.
#define Q6KCHUNK(q, xm, s, s1) \
	VMOVDQU      xm, Y8 \
	VPMADDUBSW   Y8, q, q \
	MOVBLSX      s, AX \
	MOVBLSX      s1, BX \
	VMOVD        AX, X9 \
	VMOVD        BX, X10 \
	VPBROADCASTW X9, X9 \
	VPBROADCASTW X10, X10 \
	VINSERTI128  $1, X10, Y9, Y9 \
	VPMADDWD     Y9, q, q \
	VPADDD       q, Y0, Y0

// Q6KHALF handles one 128-value half: ql at SI, qh at DX, scales at R8,
// x at DI. Y14 = 0x0F bytes, Y13 = 0x03 bytes.
#define Q6KHALF \
	VMOVDQU (SI), Y1 \
	VMOVDQU 32(SI), Y2 \
	VMOVDQU (DX), Y3 \
	VPSRLW  $4, Y1, Y4 \
	VPSRLW  $4, Y2, Y5 \
	VPAND   Y14, Y1, Y1 \
	VPAND   Y14, Y2, Y2 \
	VPAND   Y14, Y4, Y4 \
	VPAND   Y14, Y5, Y5 \
	VPAND   Y13, Y3, Y6 \
	VPSLLW  $4, Y6, Y6 \
	VPOR    Y6, Y1, Y1 \
	VPSRLW  $2, Y3, Y6 \
	VPAND   Y13, Y6, Y6 \
	VPSLLW  $4, Y6, Y6 \
	VPOR    Y6, Y2, Y2 \
	VPSRLW  $4, Y3, Y6 \
	VPAND   Y13, Y6, Y6 \
	VPSLLW  $4, Y6, Y6 \
	VPOR    Y6, Y4, Y4 \
	VPSRLW  $6, Y3, Y6 \
	VPAND   Y13, Y6, Y6 \
	VPSLLW  $4, Y6, Y6 \
	VPOR    Y6, Y5, Y5 \
	Q6KCHUNK(Y1, (DI), (R8), 1(R8)) \
	Q6KCHUNK(Y2, 32(DI), 2(R8), 3(R8)) \
	Q6KCHUNK(Y4, 64(DI), 4(R8), 5(R8)) \
	Q6KCHUNK(Y5, 96(DI), 6(R8), 7(R8))

// func q6KBlockAVX2(blk *byte, x *int8) int32
TEXT ·q6KBlockAVX2(SB), NOSPLIT, $0-20
	MOVQ         blk+0(FP), SI
	MOVQ         x+8(FP), DI
	LEAQ         128(SI), DX
	LEAQ         192(SI), R8
	VPXOR        Y0, Y0, Y0
	MOVL         $0x0f0f0f0f, AX
	VMOVD        AX, X14
	VPBROADCASTD X14, Y14
	MOVL         $0x03030303, AX
	VMOVD        AX, X13
	VPBROADCASTD X13, Y13
	Q6KHALF
	ADDQ         $64, SI
	ADDQ         $32, DX
	ADDQ         $8, R8
	ADDQ         $128, DI
	Q6KHALF
	HSUMD
	VZEROUPPER
	MOVL         AX, ret+16(FP)
	RET

// func axpyF32AVX2(dst *float32, a float32, x *float32, n int)
TEXT ·axpyF32AVX2(SB), NOSPLIT, $0-32
	MOVQ         dst+0(FP), DI
	VBROADCASTSS a+8(FP), Y0
	MOVQ         x+16(FP), SI
	MOVQ         n+24(FP), CX

axpyloop16:
	CMPQ        CX, $16
	JLT         axpyloop8
	VMOVUPS     (DI), Y1
	VMOVUPS     32(DI), Y2
	VFMADD231PS (SI), Y0, Y1
	VFMADD231PS 32(SI), Y0, Y2
	VMOVUPS     Y1, (DI)
	VMOVUPS     Y2, 32(DI)
	ADDQ        $64, SI
	ADDQ        $64, DI
	SUBQ        $16, CX
	JMP         axpyloop16

axpyloop8:
	CMPQ        CX, $8
	JLT         axpytail
	VMOVUPS     (DI), Y1
	VFMADD231PS (SI), Y0, Y1
	VMOVUPS     Y1, (DI)
	ADDQ        $32, SI
	ADDQ        $32, DI
	SUBQ        $8, CX
	JMP         axpyloop8

axpytail:
	TESTQ CX, CX
	JEQ   axpydone

axpyscalar:
	VMOVSS      (DI), X1
	VFMADD231SS (SI), X0, X1
	VMOVSS      X1, (DI)
	ADDQ        $4, SI
	ADDQ        $4, DI
	DECQ        CX
	JNZ         axpyscalar

axpydone:
	VZEROUPPER
	RET

