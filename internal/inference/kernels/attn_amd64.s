//go:build !purego

#include "textflag.h"

// Vector kernels of attention and the feed-forward activation: the
// per-position dot products of a query with the cached keys, a softmax
// with a polynomial exp, the probability-weighted sum of cached values and
// SiLU(gate)·up. Every routine ends with VZEROUPPER (see dot_amd64.s) and
// handles a row tail of fewer than eight values with masked loads and
// stores, which never touch memory past the slice.

#define EC_HI expconst<>+0(SB)
#define EC_LO expconst<>+32(SB)
#define EC_LOG2E expconst<>+64(SB)
#define EC_C1 expconst<>+96(SB)
#define EC_C2 expconst<>+128(SB)
#define EC_P0 expconst<>+160(SB)
#define EC_P1 expconst<>+192(SB)
#define EC_P2 expconst<>+224(SB)
#define EC_P3 expconst<>+256(SB)
#define EC_P4 expconst<>+288(SB)
#define EC_P5 expconst<>+320(SB)
#define EC_HALF expconst<>+352(SB)
#define EC_ONE expconst<>+384(SB)
#define EC_NEGINF expconst<>+416(SB)
#define EC_I127 expconst<>+448(SB)
#define EC_SIGN expconst<>+480(SB)
DATA expconst<>+0(SB)/8, $0x42b0c0a542b0c0a5
DATA expconst<>+8(SB)/8, $0x42b0c0a542b0c0a5
DATA expconst<>+16(SB)/8, $0x42b0c0a542b0c0a5
DATA expconst<>+24(SB)/8, $0x42b0c0a542b0c0a5
DATA expconst<>+32(SB)/8, $0xc2b0c0a5c2b0c0a5
DATA expconst<>+40(SB)/8, $0xc2b0c0a5c2b0c0a5
DATA expconst<>+48(SB)/8, $0xc2b0c0a5c2b0c0a5
DATA expconst<>+56(SB)/8, $0xc2b0c0a5c2b0c0a5
DATA expconst<>+64(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA expconst<>+72(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA expconst<>+80(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA expconst<>+88(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA expconst<>+96(SB)/8, $0x3f3180003f318000
DATA expconst<>+104(SB)/8, $0x3f3180003f318000
DATA expconst<>+112(SB)/8, $0x3f3180003f318000
DATA expconst<>+120(SB)/8, $0x3f3180003f318000
DATA expconst<>+128(SB)/8, $0xb95e8083b95e8083
DATA expconst<>+136(SB)/8, $0xb95e8083b95e8083
DATA expconst<>+144(SB)/8, $0xb95e8083b95e8083
DATA expconst<>+152(SB)/8, $0xb95e8083b95e8083
DATA expconst<>+160(SB)/8, $0x3950696739506967
DATA expconst<>+168(SB)/8, $0x3950696739506967
DATA expconst<>+176(SB)/8, $0x3950696739506967
DATA expconst<>+184(SB)/8, $0x3950696739506967
DATA expconst<>+192(SB)/8, $0x3ab743ce3ab743ce
DATA expconst<>+200(SB)/8, $0x3ab743ce3ab743ce
DATA expconst<>+208(SB)/8, $0x3ab743ce3ab743ce
DATA expconst<>+216(SB)/8, $0x3ab743ce3ab743ce
DATA expconst<>+224(SB)/8, $0x3c0889083c088908
DATA expconst<>+232(SB)/8, $0x3c0889083c088908
DATA expconst<>+240(SB)/8, $0x3c0889083c088908
DATA expconst<>+248(SB)/8, $0x3c0889083c088908
DATA expconst<>+256(SB)/8, $0x3d2aa9c13d2aa9c1
DATA expconst<>+264(SB)/8, $0x3d2aa9c13d2aa9c1
DATA expconst<>+272(SB)/8, $0x3d2aa9c13d2aa9c1
DATA expconst<>+280(SB)/8, $0x3d2aa9c13d2aa9c1
DATA expconst<>+288(SB)/8, $0x3e2aaaaa3e2aaaaa
DATA expconst<>+296(SB)/8, $0x3e2aaaaa3e2aaaaa
DATA expconst<>+304(SB)/8, $0x3e2aaaaa3e2aaaaa
DATA expconst<>+312(SB)/8, $0x3e2aaaaa3e2aaaaa
DATA expconst<>+320(SB)/8, $0x3f0000003f000000
DATA expconst<>+328(SB)/8, $0x3f0000003f000000
DATA expconst<>+336(SB)/8, $0x3f0000003f000000
DATA expconst<>+344(SB)/8, $0x3f0000003f000000
DATA expconst<>+352(SB)/8, $0x3f0000003f000000
DATA expconst<>+360(SB)/8, $0x3f0000003f000000
DATA expconst<>+368(SB)/8, $0x3f0000003f000000
DATA expconst<>+376(SB)/8, $0x3f0000003f000000
DATA expconst<>+384(SB)/8, $0x3f8000003f800000
DATA expconst<>+392(SB)/8, $0x3f8000003f800000
DATA expconst<>+400(SB)/8, $0x3f8000003f800000
DATA expconst<>+408(SB)/8, $0x3f8000003f800000
DATA expconst<>+416(SB)/8, $0xff800000ff800000
DATA expconst<>+424(SB)/8, $0xff800000ff800000
DATA expconst<>+432(SB)/8, $0xff800000ff800000
DATA expconst<>+440(SB)/8, $0xff800000ff800000
DATA expconst<>+448(SB)/8, $0x0000007f0000007f
DATA expconst<>+456(SB)/8, $0x0000007f0000007f
DATA expconst<>+464(SB)/8, $0x0000007f0000007f
DATA expconst<>+472(SB)/8, $0x0000007f0000007f
DATA expconst<>+480(SB)/8, $0x8000000080000000
DATA expconst<>+488(SB)/8, $0x8000000080000000
DATA expconst<>+496(SB)/8, $0x8000000080000000
DATA expconst<>+504(SB)/8, $0x8000000080000000
GLOBL expconst<>(SB), RODATA|NOPTR, $512
DATA tailmask<>+0(SB)/8, $0xffffffffffffffff
DATA tailmask<>+8(SB)/8, $0xffffffffffffffff
DATA tailmask<>+16(SB)/8, $0xffffffffffffffff
DATA tailmask<>+24(SB)/8, $0xffffffffffffffff
DATA tailmask<>+32(SB)/8, $0
DATA tailmask<>+40(SB)/8, $0
DATA tailmask<>+48(SB)/8, $0
DATA tailmask<>+56(SB)/8, $0
GLOBL tailmask<>(SB), RODATA|NOPTR, $64

// EXP replaces the eight lanes of Y0 with exp(Y0), as Cephes expf does:
// clamp to ±88.38, split x = n·ln2 + r with ln2 in two parts, a degree-5
// polynomial for e^r and 2^n built in the exponent bits (n = -127 gives
// 0, so very negative inputs end at exactly zero). Relative error is about
// 1e-7. Clobbers Y1-Y3.
#define EXP \
	VMINPS       EC_HI, Y0, Y0 \
	VMAXPS       EC_LO, Y0, Y0 \
	VMOVUPS      EC_HALF, Y1 \
	VFMADD231PS  EC_LOG2E, Y0, Y1 \
	VROUNDPS     $1, Y1, Y1 \
	VFNMADD231PS EC_C1, Y1, Y0 \
	VFNMADD231PS EC_C2, Y1, Y0 \
	VMOVUPS      EC_P0, Y2 \
	VFMADD213PS  EC_P1, Y0, Y2 \
	VFMADD213PS  EC_P2, Y0, Y2 \
	VFMADD213PS  EC_P3, Y0, Y2 \
	VFMADD213PS  EC_P4, Y0, Y2 \
	VFMADD213PS  EC_P5, Y0, Y2 \
	VMULPS       Y0, Y0, Y3 \
	VFMADD213PS  Y0, Y3, Y2 \
	VADDPS       EC_ONE, Y2, Y2 \
	VCVTTPS2DQ   Y1, Y1 \
	VPADDD       EC_I127, Y1, Y1 \
	VPSLLD       $23, Y1, Y1 \
	VMULPS       Y1, Y2, Y0

// TAILMASK sets Y7 to a mask of the first R lanes (0 < R < 8); R is
// clobbered.
#define TAILMASK(R) \
	LEAQ    tailmask<>+32(SB), AX \
	SHLQ    $2, R \
	SUBQ    R, AX \
	VMOVUPS (AX), Y7

// func attnScoresAVX2(out, q, k *float32, stride, hd, n int, scale float32)
TEXT ·attnScoresAVX2(SB), NOSPLIT, $0-52
	MOVQ   out+0(FP), DI
	MOVQ   q+8(FP), SI
	MOVQ   k+16(FP), BX
	MOVQ   stride+24(FP), R8
	SHLQ   $2, R8
	MOVQ   hd+32(FP), R9
	MOVQ   n+40(FP), CX
	VMOVSS scale+48(FP), X8
	VBROADCASTSS X8, X9

	// Four positions at a time share each load of q and one reduction.
sc4:
	CMPQ   CX, $4
	JLT    sc4end
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	MOVQ   SI, AX
	MOVQ   BX, DX
	LEAQ   (DX)(R8*1), R11
	LEAQ   (R11)(R8*1), R12
	LEAQ   (R12)(R8*1), R13
	MOVQ   R9, R10

sc4loop:
	VMOVUPS     (AX), Y4
	VFMADD231PS (DX), Y4, Y0
	VFMADD231PS (R11), Y4, Y1
	VFMADD231PS (R12), Y4, Y2
	VFMADD231PS (R13), Y4, Y3
	ADDQ        $32, AX
	ADDQ        $32, DX
	ADDQ        $32, R11
	ADDQ        $32, R12
	ADDQ        $32, R13
	SUBQ        $8, R10
	JNZ         sc4loop
	VHADDPS      Y1, Y0, Y0
	VHADDPS      Y3, Y2, Y2
	VHADDPS      Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VMULPS       X9, X0, X0
	VMOVUPS      X0, (DI)
	ADDQ         $16, DI
	ADDQ         R8, BX
	ADDQ         R8, BX
	ADDQ         R8, BX
	ADDQ         R8, BX
	SUBQ         $4, CX
	JMP          sc4

sc4end:
	TESTQ  CX, CX
	JEQ    scdone

scpos:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	MOVQ   SI, AX
	MOVQ   BX, DX
	MOVQ   R9, R10

sc16:
	CMPQ        R10, $16
	JLT         sc8
	VMOVUPS     (AX), Y2
	VMOVUPS     32(AX), Y3
	VFMADD231PS (DX), Y2, Y0
	VFMADD231PS 32(DX), Y3, Y1
	ADDQ        $64, AX
	ADDQ        $64, DX
	SUBQ        $16, R10
	JMP         sc16

sc8:
	TESTQ       R10, R10
	JEQ         screduce
	VMOVUPS     (AX), Y2
	VFMADD231PS (DX), Y2, Y0

screduce:
	VADDPS       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	VMULSS       X8, X0, X0
	VMOVSS       X0, (DI)
	ADDQ         $4, DI
	ADDQ         R8, BX
	DECQ         CX
	JNZ          scpos

scdone:
	VZEROUPPER
	RET

// func softmaxAVX2(x *float32, n int)
TEXT ·softmaxAVX2(SB), NOSPLIT, $0-16
	MOVQ    x+0(FP), SI
	MOVQ    n+8(FP), CX
	VMOVUPS EC_NEGINF, Y4
	MOVQ    SI, DI
	MOVQ    CX, DX

smax8:
	CMPQ   DX, $8
	JLT    smaxtail
	VMAXPS (DI), Y4, Y4
	ADDQ   $32, DI
	SUBQ   $8, DX
	JMP    smax8

smaxtail:
	TESTQ      DX, DX
	JEQ        smaxreduce
	TAILMASK(DX)
	VMASKMOVPS (DI), Y7, Y5
	VANDNPS    EC_NEGINF, Y7, Y6
	VORPS      Y6, Y5, Y5
	VMAXPS     Y5, Y4, Y4

smaxreduce:
	VEXTRACTF128 $1, Y4, X5
	VMAXPS       X5, X4, X4
	VPERMILPS    $0x4e, X4, X5
	VMAXPS       X5, X4, X4
	VPERMILPS    $0xb1, X4, X5
	VMAXPS       X5, X4, X4
	VBROADCASTSS X4, Y4
	VXORPS       Y6, Y6, Y6
	MOVQ         SI, DI
	MOVQ         CX, DX

sexp8:
	CMPQ    DX, $8
	JLT     sexptail
	VMOVUPS (DI), Y0
	VSUBPS  Y4, Y0, Y0
	EXP
	VADDPS  Y0, Y6, Y6
	VMOVUPS Y0, (DI)
	ADDQ    $32, DI
	SUBQ    $8, DX
	JMP     sexp8

sexptail:
	TESTQ      DX, DX
	JEQ        sexpreduce
	TAILMASK(DX)
	VMASKMOVPS (DI), Y7, Y0
	VSUBPS     Y4, Y0, Y0
	EXP
	VANDPS     Y7, Y0, Y0
	VADDPS     Y0, Y6, Y6
	VMASKMOVPS Y0, Y7, (DI)

sexpreduce:
	VEXTRACTF128 $1, Y6, X5
	VADDPS       X5, X6, X6
	VHADDPS      X6, X6, X6
	VHADDPS      X6, X6, X6
	VMOVUPS      EC_ONE, Y5
	VDIVSS       X6, X5, X5
	VBROADCASTSS X5, Y5
	MOVQ         SI, DI
	MOVQ         CX, DX

sscale8:
	CMPQ    DX, $8
	JLT     sscaletail
	VMULPS  (DI), Y5, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, DI
	SUBQ    $8, DX
	JMP     sscale8

sscaletail:
	TESTQ      DX, DX
	JEQ        sdone
	TAILMASK(DX)
	VMASKMOVPS (DI), Y7, Y0
	VMULPS     Y0, Y5, Y0
	VMASKMOVPS Y0, Y7, (DI)

sdone:
	VZEROUPPER
	RET

// func attnWeightedSumAVX2(out, w, v *float32, stride, hd, n int)
TEXT ·attnWeightedSumAVX2(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DI
	MOVQ w+8(FP), SI
	MOVQ v+16(FP), BX
	MOVQ stride+24(FP), R8
	SHLQ $2, R8
	MOVQ hd+32(FP), R9
	MOVQ n+40(FP), CX

ws32:
	CMPQ   R9, $32
	JLT    ws8
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	MOVQ   SI, AX
	MOVQ   BX, DX
	MOVQ   CX, R10
	TESTQ  R10, R10
	JEQ    ws32store

ws32pos:
	VBROADCASTSS (AX), Y4
	VFMADD231PS  (DX), Y4, Y0
	VFMADD231PS  32(DX), Y4, Y1
	VFMADD231PS  64(DX), Y4, Y2
	VFMADD231PS  96(DX), Y4, Y3
	ADDQ         $4, AX
	ADDQ         R8, DX
	DECQ         R10
	JNZ          ws32pos

ws32store:
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ    $128, DI
	ADDQ    $128, BX
	SUBQ    $32, R9
	JMP     ws32

ws8:
	CMPQ   R9, $8
	JLT    wsdone
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	MOVQ   SI, AX
	MOVQ   BX, DX
	MOVQ   CX, R10

ws8pair:
	CMPQ         R10, $2
	JLT          ws8one
	VBROADCASTSS (AX), Y4
	VBROADCASTSS 4(AX), Y5
	VFMADD231PS  (DX), Y4, Y0
	ADDQ         R8, DX
	VFMADD231PS  (DX), Y5, Y1
	ADDQ         R8, DX
	ADDQ         $8, AX
	SUBQ         $2, R10
	JMP          ws8pair

ws8one:
	TESTQ        R10, R10
	JEQ          ws8store
	VBROADCASTSS (AX), Y4
	VFMADD231PS  (DX), Y4, Y0

ws8store:
	VADDPS  Y1, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, DI
	ADDQ    $32, BX
	SUBQ    $8, R9
	JMP     ws8

wsdone:
	VZEROUPPER
	RET

// func siluMulAVX2(gate, up *float32, n int)
TEXT ·siluMulAVX2(SB), NOSPLIT, $0-24
	MOVQ gate+0(FP), DI
	MOVQ up+8(FP), SI
	MOVQ n+16(FP), CX

sl8:
	CMPQ    CX, $8
	JLT     sltail
	VMOVUPS (DI), Y5
	VXORPS  EC_SIGN, Y5, Y0
	EXP
	VADDPS  EC_ONE, Y0, Y0
	VDIVPS  Y0, Y5, Y0
	VMULPS  (SI), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, DI
	ADDQ    $32, SI
	SUBQ    $8, CX
	JMP     sl8

sltail:
	TESTQ      CX, CX
	JEQ        sldone
	TAILMASK(CX)
	VMASKMOVPS (DI), Y7, Y5
	VMASKMOVPS (SI), Y7, Y6
	VXORPS     EC_SIGN, Y5, Y0
	EXP
	VADDPS     EC_ONE, Y0, Y0
	VDIVPS     Y0, Y5, Y0
	VMULPS     Y6, Y0, Y0
	VMASKMOVPS Y0, Y7, (DI)

sldone:
	VZEROUPPER
	RET
