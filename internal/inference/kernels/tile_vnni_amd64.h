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
// Only VPDPBUSD needs AVX-512 (VNNI with VL, on ymm registers, so the core
// runs at its AVX2 clocks).

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
