//go:build !purego

#include "textflag.h"
#include "dot_amd64.h"

// func dotF16x2x4AVX512(w0, w1 *uint16, x *[4]*float32, n int, out *[8]float32)
//
// Two weight rows against four tokens: each pair of 8-value activation
// chunks is loaded once for both rows, and each weight chunk converted once
// for the four tokens. Every (row, token) value takes dotF16AVX2's steps
// exactly (the even chunks of each 16 into one accumulator and the odd ones
// into another, a last chunk of 8 into the first, their sum, the horizontal
// sum, then the scalar tail), so it equals that kernel's bit for bit. It
// needs AVX-512VL for the registers Y16–Y31: row 0's accumulators are
// Y0–Y7 as in dotF16x4AVX2, row 1's Y16–Y23, the activations Y24–Y31.
TEXT ·dotF16x2x4AVX512(SB), NOSPLIT, $0-40
	MOVQ   w0+0(FP), SI
	MOVQ   w1+8(FP), BX
	MOVQ   x+16(FP), AX
	MOVQ   0(AX), R8
	MOVQ   8(AX), R9
	MOVQ   16(AX), R10
	MOVQ   24(AX), R11
	MOVQ   n+24(FP), CX
	MOVQ   out+32(FP), DI
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y16, Y16, Y16
	VXORPS Y17, Y17, Y17
	VXORPS Y18, Y18, Y18
	VXORPS Y19, Y19, Y19
	VXORPS Y20, Y20, Y20
	VXORPS Y21, Y21, Y21
	VXORPS Y22, Y22, Y22
	VXORPS Y23, Y23, Y23

f16x8loop16:
	CMPQ        CX, $16
	JLT         f16x8loop8
	VCVTPH2PS   (SI), Y8
	VCVTPH2PS   16(SI), Y9
	VCVTPH2PS   (BX), Y10
	VCVTPH2PS   16(BX), Y11
	VMOVUPS     (R8), Y24
	VMOVUPS     32(R8), Y25
	VMOVUPS     (R9), Y26
	VMOVUPS     32(R9), Y27
	VMOVUPS     (R10), Y28
	VMOVUPS     32(R10), Y29
	VMOVUPS     (R11), Y30
	VMOVUPS     32(R11), Y31
	VFMADD231PS Y24, Y8, Y0
	VFMADD231PS Y25, Y9, Y1
	VFMADD231PS Y26, Y8, Y2
	VFMADD231PS Y27, Y9, Y3
	VFMADD231PS Y28, Y8, Y4
	VFMADD231PS Y29, Y9, Y5
	VFMADD231PS Y30, Y8, Y6
	VFMADD231PS Y31, Y9, Y7
	VFMADD231PS Y24, Y10, Y16
	VFMADD231PS Y25, Y11, Y17
	VFMADD231PS Y26, Y10, Y18
	VFMADD231PS Y27, Y11, Y19
	VFMADD231PS Y28, Y10, Y20
	VFMADD231PS Y29, Y11, Y21
	VFMADD231PS Y30, Y10, Y22
	VFMADD231PS Y31, Y11, Y23
	ADDQ        $32, SI
	ADDQ        $32, BX
	ADDQ        $64, R8
	ADDQ        $64, R9
	ADDQ        $64, R10
	ADDQ        $64, R11
	SUBQ        $16, CX
	JMP         f16x8loop16

f16x8loop8:
	CMPQ        CX, $8
	JLT         f16x8reduce
	VCVTPH2PS   (SI), Y8
	VCVTPH2PS   (BX), Y10
	VMOVUPS     (R8), Y24
	VMOVUPS     (R9), Y26
	VMOVUPS     (R10), Y28
	VMOVUPS     (R11), Y30
	VFMADD231PS Y24, Y8, Y0
	VFMADD231PS Y26, Y8, Y2
	VFMADD231PS Y28, Y8, Y4
	VFMADD231PS Y30, Y8, Y6
	VFMADD231PS Y24, Y10, Y16
	VFMADD231PS Y26, Y10, Y18
	VFMADD231PS Y28, Y10, Y20
	VFMADD231PS Y30, Y10, Y22
	ADDQ        $16, SI
	ADDQ        $16, BX
	ADDQ        $32, R8
	ADDQ        $32, R9
	ADDQ        $32, R10
	ADDQ        $32, R11
	SUBQ        $8, CX

f16x8reduce:
	F16TAIL(Y0, Y1, X0, SI, R8, 0(DI), f16x8t0, f16x8t0done)
	F16TAIL(Y2, Y3, X2, SI, R9, 4(DI), f16x8t1, f16x8t1done)
	F16TAIL(Y4, Y5, X4, SI, R10, 8(DI), f16x8t2, f16x8t2done)
	F16TAIL(Y6, Y7, X6, SI, R11, 12(DI), f16x8t3, f16x8t3done)
	VMOVAPS Y16, Y0
	VMOVAPS Y17, Y1
	VMOVAPS Y18, Y2
	VMOVAPS Y19, Y3
	VMOVAPS Y20, Y4
	VMOVAPS Y21, Y5
	VMOVAPS Y22, Y6
	VMOVAPS Y23, Y7
	F16TAIL(Y0, Y1, X0, BX, R8, 16(DI), f16x8t4, f16x8t4done)
	F16TAIL(Y2, Y3, X2, BX, R9, 20(DI), f16x8t5, f16x8t5done)
	F16TAIL(Y4, Y5, X4, BX, R10, 24(DI), f16x8t6, f16x8t6done)
	F16TAIL(Y6, Y7, X6, BX, R11, 28(DI), f16x8t7, f16x8t7done)
	VZEROUPPER
	RET

// F32X4TAIL finishes one token of dotF32x4AVX512 like dotF32AVX2: its four
// accumulators summed as (a0+a1)+(a2+a3), the horizontal sum, the scalar
// tail over the last CX values (weights at SI, floats at xr), stored at m.
#define F32X4TAIL(a0, a1, a2, a3, xr, m, lbl, done) \
	VADDPS       a1, a0, a0 \
	VADDPS       a3, a2, a2 \
	VADDPS       a2, a0, a0 \
	VMOVAPS      a0, Y0 \
	VEXTRACTF128 $1, Y0, X1 \
	VADDPS       X1, X0, X0 \
	VHADDPS      X0, X0, X0 \
	VHADDPS      X0, X0, X0 \
	MOVQ         CX, DX \
	MOVQ         SI, R12 \
	MOVQ         xr, R13 \
	TESTQ        DX, DX \
	JEQ          done \
lbl: \
	VMOVSS       (R12), X4 \
	VFMADD231SS  (R13), X4, X0 \
	ADDQ         $4, R12 \
	ADDQ         $4, R13 \
	DECQ         DX \
	JNZ          lbl \
done: \
	VMOVSS       X0, m

// F32X4STEP multiplies the 32 weights in Y0–Y3 by token xr's 32 floats at
// offset o into its accumulators a0–a3.
#define F32X4STEP(xr, a0, a1, a2, a3) \
	VFMADD231PS (xr), Y0, a0 \
	VFMADD231PS 32(xr), Y1, a1 \
	VFMADD231PS 64(xr), Y2, a2 \
	VFMADD231PS 96(xr), Y3, a3

// func dotF32x4AVX512(w *float32, x *[4]*float32, n int, out *[4]float32)
//
// One F32 weight row against four tokens: each 32-value weight chunk is
// loaded once for the four. Every token takes dotF32AVX2's steps exactly
// (chunks 0–3 of each 32 into four accumulators, each chunk of 8 left into
// the first, the sum (a0+a1)+(a2+a3), the horizontal sum, the scalar tail),
// so it equals that kernel's bit for bit. Token j's accumulators are
// Y16+4j to Y19+4j, which need AVX-512VL.
TEXT ·dotF32x4AVX512(SB), NOSPLIT, $0-32
	MOVQ   w+0(FP), SI
	MOVQ   x+8(FP), AX
	MOVQ   0(AX), R8
	MOVQ   8(AX), R9
	MOVQ   16(AX), R10
	MOVQ   24(AX), R11
	MOVQ   n+16(FP), CX
	MOVQ   out+24(FP), DI
	VXORPS Y16, Y16, Y16
	VXORPS Y17, Y17, Y17
	VXORPS Y18, Y18, Y18
	VXORPS Y19, Y19, Y19
	VXORPS Y20, Y20, Y20
	VXORPS Y21, Y21, Y21
	VXORPS Y22, Y22, Y22
	VXORPS Y23, Y23, Y23
	VXORPS Y24, Y24, Y24
	VXORPS Y25, Y25, Y25
	VXORPS Y26, Y26, Y26
	VXORPS Y27, Y27, Y27
	VXORPS Y28, Y28, Y28
	VXORPS Y29, Y29, Y29
	VXORPS Y30, Y30, Y30
	VXORPS Y31, Y31, Y31

f32x4loop32:
	CMPQ    CX, $32
	JLT     f32x4loop8
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	F32X4STEP(R8, Y16, Y17, Y18, Y19)
	F32X4STEP(R9, Y20, Y21, Y22, Y23)
	F32X4STEP(R10, Y24, Y25, Y26, Y27)
	F32X4STEP(R11, Y28, Y29, Y30, Y31)
	ADDQ    $128, SI
	ADDQ    $128, R8
	ADDQ    $128, R9
	ADDQ    $128, R10
	ADDQ    $128, R11
	SUBQ    $32, CX
	JMP     f32x4loop32

f32x4loop8:
	CMPQ        CX, $8
	JLT         f32x4reduce
	VMOVUPS     (SI), Y0
	VFMADD231PS (R8), Y0, Y16
	VFMADD231PS (R9), Y0, Y20
	VFMADD231PS (R10), Y0, Y24
	VFMADD231PS (R11), Y0, Y28
	ADDQ        $32, SI
	ADDQ        $32, R8
	ADDQ        $32, R9
	ADDQ        $32, R10
	ADDQ        $32, R11
	SUBQ        $8, CX
	JMP         f32x4loop8

f32x4reduce:
	F32X4TAIL(Y16, Y17, Y18, Y19, R8, 0(DI), f32x4t0, f32x4t0done)
	F32X4TAIL(Y20, Y21, Y22, Y23, R9, 4(DI), f32x4t1, f32x4t1done)
	F32X4TAIL(Y24, Y25, Y26, Y27, R10, 8(DI), f32x4t2, f32x4t2done)
	F32X4TAIL(Y28, Y29, Y30, Y31, R11, 12(DI), f32x4t3, f32x4t3done)
	VZEROUPPER
	RET
