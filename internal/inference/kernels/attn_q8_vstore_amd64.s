//go:build !purego

#include "textflag.h"

// func storeValueQuadAVX512(quad *int8, src *int8, hd, k int)
//
// Stores the hd int8 values at src as byte k of the dwords of a value quad
// (value d at quad[4d+k], attn_q8_vblocks.go): sixteen values at a time
// are zero-extended to dwords, shifted into byte k and written with a byte
// mask of every fourth byte, so the other positions' bytes of the quad,
// which another worker may be storing at the same time, are never
// written. hd is a multiple of sixteen.
TEXT ·storeValueQuadAVX512(SB), NOSPLIT, $0-32
	MOVQ quad+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ hd+16(FP), DX
	MOVQ k+24(FP), CX
	MOVQ $0x1111111111111111, AX
	SHLQ CX, AX
	KMOVQ AX, K1
	SHLQ $3, CX
	VMOVQ CX, X2

loop:
	VPMOVZXBD (SI), Z0
	VPSLLD    X2, Z0, Z0
	VMOVDQU8  Z0, K1, (DI)
	ADDQ $16, SI
	ADDQ $64, DI
	SUBQ $16, DX
	JG   loop
	VZEROUPPER
	RET
