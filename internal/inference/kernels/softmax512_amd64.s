//go:build !purego

#include "textflag.h"

// softmaxAVX512 is softmaxAVX2 sixteen lanes wide, with four independent
// max and sum chains so that a pass is not held to one VMAXPS or VADDPS
// latency per vector (the AVX2 kernel's single chains cost a ten-stream
// SmolLM2-135M step as much as its attention scores). The exponential is
// the same Cephes polynomial with the same constants, operation for
// operation, so every exp(x − max) has the AVX2 kernel's bits; only the
// order of the sum differs.

// Scalars for embedded broadcasts: the same values as attn_amd64.s's expconst.
DATA sm512<>+0(SB)/4, $0x42b0c0a5  // hi
DATA sm512<>+4(SB)/4, $0xc2b0c0a5  // lo
DATA sm512<>+8(SB)/4, $0x3fb8aa3b  // log2e
DATA sm512<>+12(SB)/4, $0x3f318000 // c1
DATA sm512<>+16(SB)/4, $0xb95e8083 // c2
DATA sm512<>+20(SB)/4, $0x39506967 // p0
DATA sm512<>+24(SB)/4, $0x3ab743ce // p1
DATA sm512<>+28(SB)/4, $0x3c088908 // p2
DATA sm512<>+32(SB)/4, $0x3d2aa9c1 // p3
DATA sm512<>+36(SB)/4, $0x3e2aaaaa // p4
DATA sm512<>+40(SB)/4, $0x3f000000 // p5 and ½
DATA sm512<>+44(SB)/4, $0x3f800000 // 1
DATA sm512<>+48(SB)/4, $0xff800000 // −∞
DATA sm512<>+52(SB)/4, $0x0000007f // 127
GLOBL sm512<>(SB), RODATA|NOPTR, $56

#define SM_HI sm512<>+0(SB)
#define SM_LO sm512<>+4(SB)
#define SM_LOG2E sm512<>+8(SB)
#define SM_C1 sm512<>+12(SB)
#define SM_C2 sm512<>+16(SB)
#define SM_P0 sm512<>+20(SB)
#define SM_P1 sm512<>+24(SB)
#define SM_P2 sm512<>+28(SB)
#define SM_P3 sm512<>+32(SB)
#define SM_P4 sm512<>+36(SB)
#define SM_P5 sm512<>+40(SB)
#define SM_HALF sm512<>+40(SB)
#define SM_ONE sm512<>+44(SB)
#define SM_NEGINF sm512<>+48(SB)
#define SM_I127 sm512<>+52(SB)

// EXP512(X, A, B, C) replaces X with e^X lane by lane, clobbering A, B, C:
// attn_amd64.s's EXP on zmm registers.
#define EXP512(X, A, B, C) \
	VMINPS.BCST       SM_HI, X, X \
	VMAXPS.BCST       SM_LO, X, X \
	VBROADCASTSS      SM_HALF, A \
	VFMADD231PS.BCST  SM_LOG2E, X, A \
	VRNDSCALEPS       $1, A, A \
	VFNMADD231PS.BCST SM_C1, A, X \
	VFNMADD231PS.BCST SM_C2, A, X \
	VBROADCASTSS      SM_P0, B \
	VFMADD213PS.BCST  SM_P1, X, B \
	VFMADD213PS.BCST  SM_P2, X, B \
	VFMADD213PS.BCST  SM_P3, X, B \
	VFMADD213PS.BCST  SM_P4, X, B \
	VFMADD213PS.BCST  SM_P5, X, B \
	VMULPS            X, X, C \
	VFMADD213PS       X, C, B \
	VADDPS.BCST       SM_ONE, B, B \
	VCVTTPS2DQ        A, A \
	VPADDD.BCST       SM_I127, A, A \
	VPSLLD            $23, A, A \
	VMULPS            A, B, X

// TAILMASK512 sets K1 to the first R lanes (0 < R < 16), clobbering CX.
#define TAILMASK512(R) \
	MOVQ  R, CX \
	MOVL  $1, AX \
	SHLL  CX, AX \
	DECL  AX \
	KMOVW AX, K1

// func softmaxAVX512(x *float32, n int)
TEXT ·softmaxAVX512(SB), NOSPLIT, $0-16
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), R8
	VBROADCASTSS SM_NEGINF, Z4
	VMOVAPS      Z4, Z5
	VMOVAPS      Z4, Z6
	VMOVAPS      Z4, Z7
	MOVQ         SI, DI
	MOVQ         R8, DX

smax64:
	CMPQ   DX, $64
	JLT    smax16
	VMAXPS (DI), Z4, Z4
	VMAXPS 64(DI), Z5, Z5
	VMAXPS 128(DI), Z6, Z6
	VMAXPS 192(DI), Z7, Z7
	ADDQ   $256, DI
	SUBQ   $64, DX
	JMP    smax64

smax16:
	CMPQ   DX, $16
	JLT    smaxtail
	VMAXPS (DI), Z4, Z4
	ADDQ   $64, DI
	SUBQ   $16, DX
	JMP    smax16

smaxtail:
	TESTQ        DX, DX
	JEQ          smaxreduce
	TAILMASK512(DX)
	VBROADCASTSS SM_NEGINF, Z8
	VMOVUPS      (DI), K1, Z8
	VMAXPS       Z8, Z5, Z5

smaxreduce:
	VMAXPS        Z5, Z4, Z4
	VMAXPS        Z7, Z6, Z6
	VMAXPS        Z6, Z4, Z4
	VEXTRACTF64X4 $1, Z4, Y5
	VMAXPS        Y5, Y4, Y4
	VEXTRACTF128  $1, Y4, X5
	VMAXPS        X5, X4, X4
	VPERMILPS     $0x4e, X4, X5
	VMAXPS        X5, X4, X4
	VPERMILPS     $0xb1, X4, X5
	VMAXPS        X5, X4, X4
	VBROADCASTSS  X4, Z4
	VXORPS        Z12, Z12, Z12
	VXORPS        Z13, Z13, Z13
	VXORPS        Z14, Z14, Z14
	VXORPS        Z15, Z15, Z15
	MOVQ          SI, DI
	MOVQ          R8, DX

sexp64:
	CMPQ    DX, $64
	JLT     sexp16
	VMOVUPS (DI), Z0
	VMOVUPS 64(DI), Z1
	VMOVUPS 128(DI), Z2
	VMOVUPS 192(DI), Z3
	VSUBPS  Z4, Z0, Z0
	VSUBPS  Z4, Z1, Z1
	VSUBPS  Z4, Z2, Z2
	VSUBPS  Z4, Z3, Z3
	EXP512(Z0, Z16, Z17, Z18)
	EXP512(Z1, Z19, Z20, Z21)
	EXP512(Z2, Z22, Z23, Z24)
	EXP512(Z3, Z25, Z26, Z27)
	VADDPS  Z0, Z12, Z12
	VADDPS  Z1, Z13, Z13
	VADDPS  Z2, Z14, Z14
	VADDPS  Z3, Z15, Z15
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z2, 128(DI)
	VMOVUPS Z3, 192(DI)
	ADDQ    $256, DI
	SUBQ    $64, DX
	JMP     sexp64

sexp16:
	CMPQ    DX, $16
	JLT     sexptail
	VMOVUPS (DI), Z0
	VSUBPS  Z4, Z0, Z0
	EXP512(Z0, Z16, Z17, Z18)
	VADDPS  Z0, Z13, Z13
	VMOVUPS Z0, (DI)
	ADDQ    $64, DI
	SUBQ    $16, DX
	JMP     sexp16

sexptail:
	TESTQ     DX, DX
	JEQ       sexpreduce
	TAILMASK512(DX)
	VMOVUPS.Z (DI), K1, Z0
	VSUBPS    Z4, Z0, Z0
	EXP512(Z0, Z16, Z17, Z18)
	VADDPS    Z0, Z14, K1, Z14
	VMOVUPS   Z0, K1, (DI)

sexpreduce:
	VADDPS        Z13, Z12, Z12
	VADDPS        Z15, Z14, Z14
	VADDPS        Z14, Z12, Z12
	VEXTRACTF64X4 $1, Z12, Y13
	VADDPS        Y13, Y12, Y12
	VEXTRACTF128  $1, Y12, X13
	VADDPS        X13, X12, X12
	VHADDPS       X12, X12, X12
	VHADDPS       X12, X12, X12
	VMOVSS        SM_ONE, X5
	VDIVSS        X12, X5, X5
	VBROADCASTSS  X5, Z5
	MOVQ          SI, DI
	MOVQ          R8, DX

sscale64:
	CMPQ    DX, $64
	JLT     sscale16
	VMULPS  (DI), Z5, Z0
	VMULPS  64(DI), Z5, Z1
	VMULPS  128(DI), Z5, Z2
	VMULPS  192(DI), Z5, Z3
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z2, 128(DI)
	VMOVUPS Z3, 192(DI)
	ADDQ    $256, DI
	SUBQ    $64, DX
	JMP     sscale64

sscale16:
	CMPQ    DX, $16
	JLT     sscaletail
	VMULPS  (DI), Z5, Z0
	VMOVUPS Z0, (DI)
	ADDQ    $64, DI
	SUBQ    $16, DX
	JMP     sscale16

sscaletail:
	TESTQ     DX, DX
	JEQ       sdone
	TAILMASK512(DX)
	VMOVUPS.Z (DI), K1, Z0
	VMULPS    Z0, Z5, Z0
	VMOVUPS   Z0, K1, (DI)

sdone:
	VZEROUPPER
	RET
