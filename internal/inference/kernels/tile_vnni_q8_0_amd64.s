//go:build !purego

#include "textflag.h"
#include "tile_amd64.h"
#include "tile_vnni_amd64.h"

// The one-row Q8_0 kernels for AVX-512 VNNI; tile_vnni_amd64.h describes
// them. Two and three tokens take a ymm register per token, four to ten
// take the tokens in pairs on zmm registers, each where it measured
// faster (BenchmarkTileKernel). One token has no VNNI kernel: the AVX2
// one measured faster (q8Tiles.prepare).

// func q8_0Tile1x2VNNI(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q8_0Tile1x2VNNI(SB), NOSPLIT, $64-72
	VTILEARGS

v80t2row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	TILESTART
	TESTQ CX, CX
	JEQ   v80t2done

v80t2loop:
	TILESCALEW((SI))
	TILESCALE8(0, 0)
	VQ8W
	VTOK(0, 0, Y0)
	VTOK(32, 4, Y1)
	TILENEXT(34, 64, 8)
	JNZ   v80t2loop

v80t2done:
	MOVQ DI, AX
	TILEOUT(Y0, X0)
	TILEOUT(Y1, X1)
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  v80t2row
	VZEROUPPER
	RET

// func q8_0Tile1x3VNNI(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q8_0Tile1x3VNNI(SB), NOSPLIT, $64-72
	VTILEARGS

v80t3row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	TILESTART
	TESTQ CX, CX
	JEQ   v80t3done

v80t3loop:
	TILESCALEW((SI))
	TILESCALE8(0, 0)
	VQ8W
	VTOK(0, 0, Y0)
	VTOK(32, 4, Y1)
	VTOK(64, 8, Y2)
	TILENEXT(34, 96, 12)
	JNZ   v80t3loop

v80t3done:
	MOVQ DI, AX
	TILEOUT(Y0, X0)
	TILEOUT(Y1, X1)
	TILEOUT(Y2, X2)
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  v80t3row
	VZEROUPPER
	RET

// The VPERMPS indices into a block's sixteen scales: tilePairIdx for the
// pair of tokens 2p and 2p+1 at 64p, tileOneIdx for an odd last token
// 2, 4, 6 or 8.
DATA tilePairIdx<>+0(SB)/8, $0x0000000000000000
DATA tilePairIdx<>+8(SB)/8, $0x0000000000000000
DATA tilePairIdx<>+16(SB)/8, $0x0000000000000000
DATA tilePairIdx<>+24(SB)/8, $0x0000000000000000
DATA tilePairIdx<>+32(SB)/8, $0x0000000100000001
DATA tilePairIdx<>+40(SB)/8, $0x0000000100000001
DATA tilePairIdx<>+48(SB)/8, $0x0000000100000001
DATA tilePairIdx<>+56(SB)/8, $0x0000000100000001
DATA tilePairIdx<>+64(SB)/8, $0x0000000200000002
DATA tilePairIdx<>+72(SB)/8, $0x0000000200000002
DATA tilePairIdx<>+80(SB)/8, $0x0000000200000002
DATA tilePairIdx<>+88(SB)/8, $0x0000000200000002
DATA tilePairIdx<>+96(SB)/8, $0x0000000300000003
DATA tilePairIdx<>+104(SB)/8, $0x0000000300000003
DATA tilePairIdx<>+112(SB)/8, $0x0000000300000003
DATA tilePairIdx<>+120(SB)/8, $0x0000000300000003
DATA tilePairIdx<>+128(SB)/8, $0x0000000400000004
DATA tilePairIdx<>+136(SB)/8, $0x0000000400000004
DATA tilePairIdx<>+144(SB)/8, $0x0000000400000004
DATA tilePairIdx<>+152(SB)/8, $0x0000000400000004
DATA tilePairIdx<>+160(SB)/8, $0x0000000500000005
DATA tilePairIdx<>+168(SB)/8, $0x0000000500000005
DATA tilePairIdx<>+176(SB)/8, $0x0000000500000005
DATA tilePairIdx<>+184(SB)/8, $0x0000000500000005
DATA tilePairIdx<>+192(SB)/8, $0x0000000600000006
DATA tilePairIdx<>+200(SB)/8, $0x0000000600000006
DATA tilePairIdx<>+208(SB)/8, $0x0000000600000006
DATA tilePairIdx<>+216(SB)/8, $0x0000000600000006
DATA tilePairIdx<>+224(SB)/8, $0x0000000700000007
DATA tilePairIdx<>+232(SB)/8, $0x0000000700000007
DATA tilePairIdx<>+240(SB)/8, $0x0000000700000007
DATA tilePairIdx<>+248(SB)/8, $0x0000000700000007
DATA tilePairIdx<>+256(SB)/8, $0x0000000800000008
DATA tilePairIdx<>+264(SB)/8, $0x0000000800000008
DATA tilePairIdx<>+272(SB)/8, $0x0000000800000008
DATA tilePairIdx<>+280(SB)/8, $0x0000000800000008
DATA tilePairIdx<>+288(SB)/8, $0x0000000900000009
DATA tilePairIdx<>+296(SB)/8, $0x0000000900000009
DATA tilePairIdx<>+304(SB)/8, $0x0000000900000009
DATA tilePairIdx<>+312(SB)/8, $0x0000000900000009
GLOBL tilePairIdx<>(SB), RODATA|NOPTR, $320
DATA tileOneIdx<>+0(SB)/8, $0x0000000200000002
DATA tileOneIdx<>+8(SB)/8, $0x0000000200000002
DATA tileOneIdx<>+16(SB)/8, $0x0000000200000002
DATA tileOneIdx<>+24(SB)/8, $0x0000000200000002
DATA tileOneIdx<>+32(SB)/8, $0x0000000200000002
DATA tileOneIdx<>+40(SB)/8, $0x0000000200000002
DATA tileOneIdx<>+48(SB)/8, $0x0000000200000002
DATA tileOneIdx<>+56(SB)/8, $0x0000000200000002
DATA tileOneIdx<>+64(SB)/8, $0x0000000400000004
DATA tileOneIdx<>+72(SB)/8, $0x0000000400000004
DATA tileOneIdx<>+80(SB)/8, $0x0000000400000004
DATA tileOneIdx<>+88(SB)/8, $0x0000000400000004
DATA tileOneIdx<>+96(SB)/8, $0x0000000400000004
DATA tileOneIdx<>+104(SB)/8, $0x0000000400000004
DATA tileOneIdx<>+112(SB)/8, $0x0000000400000004
DATA tileOneIdx<>+120(SB)/8, $0x0000000400000004
DATA tileOneIdx<>+128(SB)/8, $0x0000000600000006
DATA tileOneIdx<>+136(SB)/8, $0x0000000600000006
DATA tileOneIdx<>+144(SB)/8, $0x0000000600000006
DATA tileOneIdx<>+152(SB)/8, $0x0000000600000006
DATA tileOneIdx<>+160(SB)/8, $0x0000000600000006
DATA tileOneIdx<>+168(SB)/8, $0x0000000600000006
DATA tileOneIdx<>+176(SB)/8, $0x0000000600000006
DATA tileOneIdx<>+184(SB)/8, $0x0000000600000006
DATA tileOneIdx<>+192(SB)/8, $0x0000000800000008
DATA tileOneIdx<>+200(SB)/8, $0x0000000800000008
DATA tileOneIdx<>+208(SB)/8, $0x0000000800000008
DATA tileOneIdx<>+216(SB)/8, $0x0000000800000008
DATA tileOneIdx<>+224(SB)/8, $0x0000000800000008
DATA tileOneIdx<>+232(SB)/8, $0x0000000800000008
DATA tileOneIdx<>+240(SB)/8, $0x0000000800000008
DATA tileOneIdx<>+248(SB)/8, $0x0000000800000008
GLOBL tileOneIdx<>(SB), RODATA|NOPTR, $256

// func q8_0Tile1x4VNNI(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q8_0Tile1x4VNNI(SB), NOSPLIT, $0-72
	ZTILEARGS
	VMOVDQU32 tilePairIdx<>+0(SB), Z17
	VMOVDQU32 tilePairIdx<>+64(SB), Z18

z80t4row:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	TILESTART
	TESTQ CX, CX
	JEQ   z80t4done

z80t4loop:
	ZSCALES
	ZQ8W
	ZPAIR(0, Z17, Z0)
	ZPAIR(64, Z18, Z1)
	TILENEXT(34, 128, 16)
	JNZ   z80t4loop

z80t4done:
	MOVQ DI, AX
	ZPAIROUT(Z0, Y0, X0)
	ZPAIROUT(Z1, Y1, X1)
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  z80t4row
	VZEROUPPER
	RET

// func q8_0Tile1x5VNNI(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q8_0Tile1x5VNNI(SB), NOSPLIT, $0-72
	ZTILEARGS
	VMOVDQU32 tilePairIdx<>+0(SB), Z17
	VMOVDQU32 tilePairIdx<>+64(SB), Z18
	VMOVDQU32 tileOneIdx<>+64(SB), Z22

z80t5row:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	TILESTART
	TESTQ CX, CX
	JEQ   z80t5done

z80t5loop:
	ZSCALES
	ZQ8W
	ZPAIR(0, Z17, Z0)
	ZPAIR(64, Z18, Z1)
	ZONE(128, Y2)
	TILENEXT(34, 160, 20)
	JNZ   z80t5loop

z80t5done:
	MOVQ DI, AX
	ZPAIROUT(Z0, Y0, X0)
	ZPAIROUT(Z1, Y1, X1)
	TILEOUT(Y2, X2)
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  z80t5row
	VZEROUPPER
	RET

// func q8_0Tile1x6VNNI(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q8_0Tile1x6VNNI(SB), NOSPLIT, $0-72
	ZTILEARGS
	VMOVDQU32 tilePairIdx<>+0(SB), Z17
	VMOVDQU32 tilePairIdx<>+64(SB), Z18
	VMOVDQU32 tilePairIdx<>+128(SB), Z19

z80t6row:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	TILESTART
	TESTQ CX, CX
	JEQ   z80t6done

z80t6loop:
	ZSCALES
	ZQ8W
	ZPAIR(0, Z17, Z0)
	ZPAIR(64, Z18, Z1)
	ZPAIR(128, Z19, Z2)
	TILENEXT(34, 192, 24)
	JNZ   z80t6loop

z80t6done:
	MOVQ DI, AX
	ZPAIROUT(Z0, Y0, X0)
	ZPAIROUT(Z1, Y1, X1)
	ZPAIROUT(Z2, Y2, X2)
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  z80t6row
	VZEROUPPER
	RET

// func q8_0Tile1x7VNNI(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q8_0Tile1x7VNNI(SB), NOSPLIT, $0-72
	ZTILEARGS
	VMOVDQU32 tilePairIdx<>+0(SB), Z17
	VMOVDQU32 tilePairIdx<>+64(SB), Z18
	VMOVDQU32 tilePairIdx<>+128(SB), Z19
	VMOVDQU32 tileOneIdx<>+128(SB), Z22

z80t7row:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	TILESTART
	TESTQ CX, CX
	JEQ   z80t7done

z80t7loop:
	ZSCALES
	ZQ8W
	ZPAIR(0, Z17, Z0)
	ZPAIR(64, Z18, Z1)
	ZPAIR(128, Z19, Z2)
	ZONE(192, Y3)
	TILENEXT(34, 224, 28)
	JNZ   z80t7loop

z80t7done:
	MOVQ DI, AX
	ZPAIROUT(Z0, Y0, X0)
	ZPAIROUT(Z1, Y1, X1)
	ZPAIROUT(Z2, Y2, X2)
	TILEOUT(Y3, X3)
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  z80t7row
	VZEROUPPER
	RET

// func q8_0Tile1x8VNNI(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q8_0Tile1x8VNNI(SB), NOSPLIT, $0-72
	ZTILEARGS
	VMOVDQU32 tilePairIdx<>+0(SB), Z17
	VMOVDQU32 tilePairIdx<>+64(SB), Z18
	VMOVDQU32 tilePairIdx<>+128(SB), Z19
	VMOVDQU32 tilePairIdx<>+192(SB), Z20

z80t8row:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	TILESTART
	TESTQ CX, CX
	JEQ   z80t8done

z80t8loop:
	ZSCALES
	ZQ8W
	ZPAIR(0, Z17, Z0)
	ZPAIR(64, Z18, Z1)
	ZPAIR(128, Z19, Z2)
	ZPAIR(192, Z20, Z3)
	TILENEXT(34, 256, 32)
	JNZ   z80t8loop

z80t8done:
	MOVQ DI, AX
	ZPAIROUT(Z0, Y0, X0)
	ZPAIROUT(Z1, Y1, X1)
	ZPAIROUT(Z2, Y2, X2)
	ZPAIROUT(Z3, Y3, X3)
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  z80t8row
	VZEROUPPER
	RET

// func q8_0Tile1x9VNNI(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q8_0Tile1x9VNNI(SB), NOSPLIT, $0-72
	ZTILEARGS
	VMOVDQU32 tilePairIdx<>+0(SB), Z17
	VMOVDQU32 tilePairIdx<>+64(SB), Z18
	VMOVDQU32 tilePairIdx<>+128(SB), Z19
	VMOVDQU32 tilePairIdx<>+192(SB), Z20
	VMOVDQU32 tileOneIdx<>+192(SB), Z22

z80t9row:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	TILESTART
	TESTQ CX, CX
	JEQ   z80t9done

z80t9loop:
	ZSCALES
	ZQ8W
	ZPAIR(0, Z17, Z0)
	ZPAIR(64, Z18, Z1)
	ZPAIR(128, Z19, Z2)
	ZPAIR(192, Z20, Z3)
	ZONE(256, Y4)
	TILENEXT(34, 288, 36)
	JNZ   z80t9loop

z80t9done:
	MOVQ DI, AX
	ZPAIROUT(Z0, Y0, X0)
	ZPAIROUT(Z1, Y1, X1)
	ZPAIROUT(Z2, Y2, X2)
	ZPAIROUT(Z3, Y3, X3)
	TILEOUT(Y4, X4)
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  z80t9row
	VZEROUPPER
	RET

// func q8_0Tile1x10VNNI(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q8_0Tile1x10VNNI(SB), NOSPLIT, $0-72
	ZTILEARGS
	VMOVDQU32 tilePairIdx<>+0(SB), Z17
	VMOVDQU32 tilePairIdx<>+64(SB), Z18
	VMOVDQU32 tilePairIdx<>+128(SB), Z19
	VMOVDQU32 tilePairIdx<>+192(SB), Z20
	VMOVDQU32 tilePairIdx<>+256(SB), Z21

z80t10row:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	TILESTART
	TESTQ CX, CX
	JEQ   z80t10done

z80t10loop:
	ZSCALES
	ZQ8W
	ZPAIR(0, Z17, Z0)
	ZPAIR(64, Z18, Z1)
	ZPAIR(128, Z19, Z2)
	ZPAIR(192, Z20, Z3)
	ZPAIR(256, Z21, Z4)
	TILENEXT(34, 320, 40)
	JNZ   z80t10loop

z80t10done:
	MOVQ DI, AX
	ZPAIROUT(Z0, Y0, X0)
	ZPAIROUT(Z1, Y1, X1)
	ZPAIROUT(Z2, Y2, X2)
	ZPAIROUT(Z3, Y3, X3)
	ZPAIROUT(Z4, Y4, X4)
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  z80t10row
	VZEROUPPER
	RET
