// Macros shared by tile_vnni_q8_0_amd64.s and tile_vnni_q4_0_amd64.s, the
// AVX-512 VNNI forms of the one-row tiles of tile_amd64.h (whose TILE*
// macros they reuse). VPDPBUSD multiplies unsigned bytes by signed bytes
// and adds each group of four products straight into an int32 lane, which
// replaces the AVX2 chain VPSIGNB, VPMADDUBSW, VPMADDWD. The activations
// are stored as x+128 (q8Tiles.biased), so they are the unsigned operand
// and the weights the signed one, w for Q8_0 and q−8 for Q4_0; the extra
// 128·Σw of each lane is a property of the weight block alone, so it is
// computed once per block and every token's product starts from −128·Σw.
//
// The int32 lanes hold exactly the sums of the AVX2 kernels (the same four
// products per lane, no saturation on either path: |x| ≤ 127), and the float
// arithmetic after them is the same instructions in the same order, so the
// two paths agree bit for bit and a token's result still does not depend on
// the kernel family or the batch.
//
// Registers as in tile_amd64.h except: Y10 the block's signed weights,
// Y11 −128·Σw per lane, Y12 the biased activation, Y15 128 in every byte.
// The two- and three-token kernels use ymm registers; from four tokens the
// zmm form below measured faster (1.1–1.45× the ymm one at 6–10 tokens on
// this Zen 4 class CPU, which runs 512-bit operations as two 256-bit halves
// without lowering its clock).

DATA tileBias<>+0(SB)/8, $0x8080808080808080
DATA tileBias<>+8(SB)/8, $0x8080808080808080
DATA tileBias<>+16(SB)/8, $0x8080808080808080
DATA tileBias<>+24(SB)/8, $0x8080808080808080
GLOBL tileBias<>(SB), RODATA|NOPTR, $32

DATA tileEights<>+0(SB)/8, $0x0808080808080808
DATA tileEights<>+8(SB)/8, $0x0808080808080808
DATA tileEights<>+16(SB)/8, $0x0808080808080808
DATA tileEights<>+24(SB)/8, $0x0808080808080808
GLOBL tileEights<>(SB), RODATA|NOPTR, $32

#define VTILEARGS \
	TILEARGS \
	VMOVDQU tileBias<>(SB), Y15

// VCORR leaves −128·Σw of each lane of the weights in Y10 in Y11.
#define VCORR \
	VPXOR    Y13, Y13, Y13 \
	VPDPBUSD Y10, Y15, Y13 \
	VPXOR    Y11, Y11, Y11 \
	VPSUBD   Y13, Y11, Y11

// VQ8W loads the Q8_0 block's weights into Y10 and their correction.
#define VQ8W \
	VMOVDQU 2(SI), Y10 \
	VCORR

// VQ4W expands the Q4_0 block into q−8 in Y10 and its correction.
#define VQ4W \
	Q4W(2(SI), X10, Y10) \
	VPSUBB tileEights<>(SB), Y10, Y10 \
	VCORR

// VPROD leaves the block product with the biased activation at xo(R8) in
// Y13 as floats: Σ (x+128)·w − 128·Σw = Σ x·w exactly.
#define VPROD(xo) \
	VMOVDQU   xo(R8), Y12 \
	VMOVDQU   Y11, Y13 \
	VPDPBUSD  Y10, Y12, Y13 \
	VCVTDQ2PS Y13, Y13

// VTOK adds the product with the token at xo(R8), scaled by so(SP), to acc.
#define VTOK(xo, so, acc) \
	VPROD(xo) \
	VBROADCASTSS so(SP), Y14 \
	VFMADD231PS  Y13, Y14, acc

DATA tileNibbleShift<>+0(SB)/8, $0
DATA tileNibbleShift<>+8(SB)/8, $0
DATA tileNibbleShift<>+16(SB)/8, $4
DATA tileNibbleShift<>+24(SB)/8, $4
DATA tileNibbleShift<>+32(SB)/8, $0
DATA tileNibbleShift<>+40(SB)/8, $0
DATA tileNibbleShift<>+48(SB)/8, $4
DATA tileNibbleShift<>+56(SB)/8, $4
GLOBL tileNibbleShift<>(SB), RODATA|NOPTR, $64

// The kernels for two tokens and more take the tokens in pairs on zmm
// registers: tokens k and k+1 of a block are 64 adjacent bytes, the weights
// and their correction are broadcast to both halves, and VPERMPS picks each
// half's scale out of the block's sixteen (Z16). Every lane sees the same
// operations as on ymm, so the results stay bit-identical.
//
// Registers: Z0–Z4 the pairs' accumulators (and Y5 or the last one for an
// odd token), Z10 weights, Z11 correction, Z12 activations, Z13 product,
// Z14 scales, Z15 128 in every byte, Z16 the block's scales, Z17–Z21 the
// pairs' scale indices, Z22 the odd token's, Z23–Z25 ZQ4W's constants.

#define ZTILEARGS \
	TILEARGS \
	VBROADCASTI64X4 tileBias<>(SB), Z15

// ZQ4ARGS loads ZQ4W's constants.
#define ZQ4ARGS \
	VMOVDQU64       tileNibbleShift<>(SB), Z23 \
	VBROADCASTI64X4 tileNibbleMask<>(SB), Z24 \
	VBROADCASTI64X4 tileEights<>(SB), Z25

// ZSCALES leaves the weight scale times the group's (up to sixteen)
// activation scales in Z16.
#define ZSCALES \
	MOVWLZX      (SI), AX \
	VMOVD        AX, X13 \
	VCVTPH2PS    X13, X13 \
	VBROADCASTSS X13, Z13 \
	VMULPS       (R9), Z13, Z16

#define ZCORR \
	VPXORD   Z13, Z13, Z13 \
	VPDPBUSD Z10, Z15, Z13 \
	VPXORD   Z11, Z11, Z11 \
	VPSUBD   Z13, Z11, Z11

#define ZQ8W \
	VBROADCASTI64X4 2(SI), Z10 \
	ZCORR

// ZQ4W expands the Q4_0 block into q−8 in both halves of Z10 and its
// correction: the 16 bytes go to all four 128-bit lanes, lanes 1 and 3 are
// shifted right by four bits (Z23), and the mask keeps each byte's low
// nibble (Z24: 0x0f bytes, Z25: 8 bytes).
#define ZQ4W \
	VBROADCASTI32X4 2(SI), Z10 \
	VPSRLVQ         Z23, Z10, Z10 \
	VPANDD          Z24, Z10, Z10 \
	VPSUBB          Z25, Z10, Z10 \
	ZCORR

// ZPAIR adds the products with the token pair at xo(R8), scaled by the
// scales idx picks, to acc.
#define ZPAIR(xo, idx, acc) \
	VMOVDQU64 xo(R8), Z12 \
	VMOVDQA64 Z11, Z13 \
	VPDPBUSD  Z10, Z12, Z13 \
	VCVTDQ2PS Z13, Z13 \
	VPERMPS   Z16, idx, Z14 \
	VFMADD231PS Z13, Z14, acc

// ZONE adds the product with the odd last token at xo(R8) to acc (ymm).
#define ZONE(xo, acc) \
	VMOVDQU   xo(R8), Y12 \
	VMOVDQA64 Y11, Y13 \
	VPDPBUSD  Y10, Y12, Y13 \
	VCVTDQ2PS Y13, Y13 \
	VPERMPS   Z16, Z22, Z14 \
	VFMADD231PS Y13, Y14, acc

// ZPAIROUT stores the two tokens' sums of the pair accumulator z (whose
// low half is y) as TILEOUT does.
#define ZPAIROUT(z, y, x) \
	VEXTRACTF64X4 $1, z, Y14 \
	TILEOUT(y, x) \
	TILEOUT(Y14, X14)
