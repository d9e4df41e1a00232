//go:build !purego

#include "textflag.h"

// How rows enter the int8 KV cache (QuantizeKVRow), AVX-512, sixteen values
// at a time; the callers guarantee n ≥ 16 and a multiple of sixteen.

// func kvAbsMaxAVX512(x *float32, n int) float32
//
// The largest magnitude of x[0:n], or NaN when x holds a NaN or an
// infinity. A maximum is exact whatever the order, so a finite result
// equals the Go loop's; VMAXPS does not carry a NaN along (it returns one
// operand or the other), so the kernel also sums x·0, which is ±0 for every
// finite value and NaN otherwise, and adds that sum to the maximum.
TEXT ·kvAbsMaxAVX512(SB), NOSPLIT, $0-20
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	MOVL         $0x7fffffff, AX
	VPBROADCASTD AX, Z2
	VPXORD       Z0, Z0, Z0
	VPXORD       Z3, Z3, Z3
	VPXORD       Z4, Z4, Z4
	XORQ         R10, R10

amloop:
	VMOVUPS (SI)(R10*4), Z1
	VMULPS  Z4, Z1, Z5
	VADDPS  Z5, Z3, Z3
	VPANDD  Z2, Z1, Z1
	VMAXPS  Z1, Z0, Z0
	ADDQ    $16, R10
	CMPQ    R10, CX
	JLT     amloop

	VEXTRACTF64X4 $1, Z0, Y1
	VMAXPS        Y1, Y0, Y0
	VEXTRACTF64X4 $1, Z3, Y5
	VADDPS        Y5, Y3, Y3
	VADDPS        Y3, Y0, Y0
	VEXTRACTF128  $1, Y0, X1
	VMAXPS        X1, X0, X0
	VEXTRACTF128  $1, Y3, X5
	VADDPS        X5, X3, X3
	VADDPS        X3, X0, X0
	VPERMILPS     $0x4e, X0, X1
	VMAXPS        X1, X0, X0
	VPERMILPS     $0x4e, X3, X5
	VADDPS        X5, X3, X3
	VADDPS        X3, X0, X0
	VPERMILPS     $0xb1, X0, X1
	VMAXPS        X1, X0, X0
	VPERMILPS     $0xb1, X3, X5
	VADDPS        X5, X3, X3
	VADDPS        X3, X0, X0
	VMOVSS        X0, ret+16(FP)
	VZEROUPPER
	RET

// func kvQuantizeAVX512(dst *int8, x *float32, n int, id float32)
//
// dst[i] = round-to-nearest-even(x[i] · id), as QuantizeKVRow's Go loop:
// the product is rounded to float32 first, VCVTPS2DQ rounds to even under
// the default MXCSR, and |x · id| ≤ 127 fits int8 (VPMOVSDB saturates).
TEXT ·kvQuantizeAVX512(SB), NOSPLIT, $0-28
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS id+24(FP), Z2
	XORQ         R10, R10

qloop:
	VMULPS    (SI)(R10*4), Z2, Z1
	VCVTPS2DQ Z1, Z1
	VPMOVSDB  Z1, (DI)(R10*1)
	ADDQ      $16, R10
	CMPQ      R10, CX
	JLT       qloop

	VZEROUPPER
	RET

// The AVX2 forms of the two kernels above, eight values at a time, for CPUs
// without AVX-512; their results are the same bits (a maximum and a rounding
// do not depend on the width).

// func kvAbsMaxAVX2(x *float32, n int) float32
TEXT ·kvAbsMaxAVX2(SB), NOSPLIT, $0-20
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	MOVQ         $0x7fffffff, AX
	MOVQ         AX, X2
	VPBROADCASTD X2, Y2
	VXORPS       Y0, Y0, Y0
	VXORPS       Y3, Y3, Y3
	VXORPS       Y4, Y4, Y4
	XORQ         R10, R10

am2loop:
	VMOVUPS (SI)(R10*4), Y1
	VMULPS  Y4, Y1, Y5
	VADDPS  Y5, Y3, Y3
	VANDPS  Y2, Y1, Y1
	VMAXPS  Y1, Y0, Y0
	ADDQ    $8, R10
	CMPQ    R10, CX
	JLT     am2loop

	VEXTRACTF128 $1, Y0, X1
	VMAXPS       X1, X0, X0
	VEXTRACTF128 $1, Y3, X5
	VADDPS       X5, X3, X3
	VPERMILPS    $0x4e, X0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0x4e, X3, X5
	VADDPS       X5, X3, X3
	VPERMILPS    $0xb1, X0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0xb1, X3, X5
	VADDPS       X5, X3, X3
	VADDSS       X3, X0, X0
	VMOVSS       X0, ret+16(FP)
	VZEROUPPER
	RET

// func kvQuantizeAVX2(dst *int8, x *float32, n int, id float32)
//
// Sixteen values per pass: two blocks of eight rounded to int32, packed to
// int16 (VPACKSSDW interleaves the blocks' 128-bit halves, VPERMQ puts them
// back in order) and to int8.
TEXT ·kvQuantizeAVX2(SB), NOSPLIT, $0-28
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS id+24(FP), Y2
	XORQ         R10, R10

q2loop:
	VMULPS       (SI)(R10*4), Y2, Y0
	VMULPS       32(SI)(R10*4), Y2, Y1
	VCVTPS2DQ    Y0, Y0
	VCVTPS2DQ    Y1, Y1
	VPACKSSDW    Y1, Y0, Y0
	VPERMQ       $0xd8, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPACKSSWB    X1, X0, X0
	VMOVDQU      X0, (DI)(R10*1)
	ADDQ         $16, R10
	CMPQ         R10, CX
	JLT          q2loop

	VZEROUPPER
	RET
