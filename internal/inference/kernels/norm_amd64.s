//go:build !purego

#include "textflag.h"

// func sumSquaresF64AVX2(x *float32, n int) float64
//
// Y0-Y3 hold lanes 0-3, 4-7, 8-11 and 12-15 of each sixteen-value stretch
// (norm.go gives the order the Go version mirrors).
TEXT ·sumSquaresF64AVX2(SB), NOSPLIT, $0-24
	MOVQ   x+0(FP), SI
	MOVQ   n+8(FP), CX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3

ssloop:
	CMPQ        CX, $16
	JLT         ssreduce
	VCVTPS2PD   (SI), Y4
	VCVTPS2PD   16(SI), Y5
	VCVTPS2PD   32(SI), Y6
	VCVTPS2PD   48(SI), Y7
	VFMADD231PD Y4, Y4, Y0
	VFMADD231PD Y5, Y5, Y1
	VFMADD231PD Y6, Y6, Y2
	VFMADD231PD Y7, Y7, Y3
	ADDQ        $64, SI
	SUBQ        $16, CX
	JMP         ssloop

ssreduce:
	// acc[j] = (lanes[j] + lanes[4+j]) + (lanes[8+j] + lanes[12+j]).
	VADDPD       Y1, Y0, Y0
	VADDPD       Y3, Y2, Y2
	VADDPD       Y2, Y0, Y0
	// (acc0 + acc2) + (acc1 + acc3).
	VEXTRACTF128 $1, Y0, X1
	VADDPD       X1, X0, X0
	VPERMILPD    $1, X0, X1
	VADDSD       X1, X0, X0
	TESTQ        CX, CX
	JEQ          ssdone

sstail:
	VCVTSS2SD   (SI), X4, X4
	VFMADD231SD X4, X4, X0
	ADDQ        $4, SI
	DECQ        CX
	JNZ         sstail

ssdone:
	VZEROUPPER
	MOVSD X0, ret+16(FP)
	RET

// func scaleMulF32AVX2(dst, src, w *float32, s float32, n int)
TEXT ·scaleMulF32AVX2(SB), NOSPLIT, $0-40
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         w+16(FP), DX
	VBROADCASTSS s+24(FP), Y15
	MOVQ         n+32(FP), CX

smloop:
	CMPQ   CX, $16
	JLT    smloop8
	VMULPS (SI), Y15, Y0
	VMULPS 32(SI), Y15, Y1
	VMULPS (DX), Y0, Y0
	VMULPS 32(DX), Y1, Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ   $64, SI
	ADDQ   $64, DX
	ADDQ   $64, DI
	SUBQ   $16, CX
	JMP    smloop

smloop8:
	CMPQ    CX, $8
	JLT     smtail
	VMULPS  (SI), Y15, Y0
	VMULPS  (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     smloop8

smtail:
	TESTQ  CX, CX
	JEQ    smdone
	VMULSS (SI), X15, X0
	VMULSS (DX), X0, X0
	VMOVSS X0, (DI)
	ADDQ   $4, SI
	ADDQ   $4, DX
	ADDQ   $4, DI
	DECQ   CX
	JMP    smtail

smdone:
	VZEROUPPER
	RET
