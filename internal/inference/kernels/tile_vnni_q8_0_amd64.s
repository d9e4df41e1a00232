//go:build !purego

#include "textflag.h"
#include "tile_amd64.h"
#include "tile_vnni_amd64.h"

// The one-row Q8_0 kernels for AVX-512 VNNI; tile_vnni_amd64.h describes
// them, one kernel per token count as in tile_q8_0_amd64.s.

// func q8_0Tile1x1VNNI(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q8_0Tile1x1VNNI(SB), NOSPLIT, $0-72
	VTILEARGS

v80t1row:
	VXORPS Y0, Y0, Y0
	TILESTART
	TESTQ CX, CX
	JEQ   v80t1done

v80t1loop:
	TILESCALE1((SI), 0)
	VQ8W
	VPROD(0)
	VFMADD231PS Y13, Y14, Y0
	TILENEXT(34, 32, 4)
	JNZ   v80t1loop

v80t1done:
	MOVQ DI, AX
	TILEOUT(Y0, X0)
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  v80t1row
	VZEROUPPER
	RET

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

// func q8_0Tile1x4VNNI(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q8_0Tile1x4VNNI(SB), NOSPLIT, $64-72
	VTILEARGS

v80t4row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	TILESTART
	TESTQ CX, CX
	JEQ   v80t4done

v80t4loop:
	TILESCALEW((SI))
	TILESCALE8(0, 0)
	VQ8W
	VTOK(0, 0, Y0)
	VTOK(32, 4, Y1)
	VTOK(64, 8, Y2)
	VTOK(96, 12, Y3)
	TILENEXT(34, 128, 16)
	JNZ   v80t4loop

v80t4done:
	MOVQ DI, AX
	TILEOUT(Y0, X0)
	TILEOUT(Y1, X1)
	TILEOUT(Y2, X2)
	TILEOUT(Y3, X3)
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  v80t4row
	VZEROUPPER
	RET

// func q8_0Tile1x5VNNI(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q8_0Tile1x5VNNI(SB), NOSPLIT, $64-72
	VTILEARGS

v80t5row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	TILESTART
	TESTQ CX, CX
	JEQ   v80t5done

v80t5loop:
	TILESCALEW((SI))
	TILESCALE8(0, 0)
	VQ8W
	VTOK(0, 0, Y0)
	VTOK(32, 4, Y1)
	VTOK(64, 8, Y2)
	VTOK(96, 12, Y3)
	VTOK(128, 16, Y4)
	TILENEXT(34, 160, 20)
	JNZ   v80t5loop

v80t5done:
	MOVQ DI, AX
	TILEOUT(Y0, X0)
	TILEOUT(Y1, X1)
	TILEOUT(Y2, X2)
	TILEOUT(Y3, X3)
	TILEOUT(Y4, X4)
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  v80t5row
	VZEROUPPER
	RET

// func q8_0Tile1x6VNNI(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q8_0Tile1x6VNNI(SB), NOSPLIT, $64-72
	VTILEARGS

v80t6row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	TILESTART
	TESTQ CX, CX
	JEQ   v80t6done

v80t6loop:
	TILESCALEW((SI))
	TILESCALE8(0, 0)
	VQ8W
	VTOK(0, 0, Y0)
	VTOK(32, 4, Y1)
	VTOK(64, 8, Y2)
	VTOK(96, 12, Y3)
	VTOK(128, 16, Y4)
	VTOK(160, 20, Y5)
	TILENEXT(34, 192, 24)
	JNZ   v80t6loop

v80t6done:
	MOVQ DI, AX
	TILEOUT(Y0, X0)
	TILEOUT(Y1, X1)
	TILEOUT(Y2, X2)
	TILEOUT(Y3, X3)
	TILEOUT(Y4, X4)
	TILEOUT(Y5, X5)
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  v80t6row
	VZEROUPPER
	RET

// func q8_0Tile1x7VNNI(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q8_0Tile1x7VNNI(SB), NOSPLIT, $64-72
	VTILEARGS

v80t7row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	TILESTART
	TESTQ CX, CX
	JEQ   v80t7done

v80t7loop:
	TILESCALEW((SI))
	TILESCALE8(0, 0)
	VQ8W
	VTOK(0, 0, Y0)
	VTOK(32, 4, Y1)
	VTOK(64, 8, Y2)
	VTOK(96, 12, Y3)
	VTOK(128, 16, Y4)
	VTOK(160, 20, Y5)
	VTOK(192, 24, Y6)
	TILENEXT(34, 224, 28)
	JNZ   v80t7loop

v80t7done:
	MOVQ DI, AX
	TILEOUT(Y0, X0)
	TILEOUT(Y1, X1)
	TILEOUT(Y2, X2)
	TILEOUT(Y3, X3)
	TILEOUT(Y4, X4)
	TILEOUT(Y5, X5)
	TILEOUT(Y6, X6)
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  v80t7row
	VZEROUPPER
	RET

// func q8_0Tile1x8VNNI(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q8_0Tile1x8VNNI(SB), NOSPLIT, $64-72
	VTILEARGS

v80t8row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	TILESTART
	TESTQ CX, CX
	JEQ   v80t8done

v80t8loop:
	TILESCALEW((SI))
	TILESCALE8(0, 0)
	VQ8W
	VTOK(0, 0, Y0)
	VTOK(32, 4, Y1)
	VTOK(64, 8, Y2)
	VTOK(96, 12, Y3)
	VTOK(128, 16, Y4)
	VTOK(160, 20, Y5)
	VTOK(192, 24, Y6)
	VTOK(224, 28, Y7)
	TILENEXT(34, 256, 32)
	JNZ   v80t8loop

v80t8done:
	MOVQ DI, AX
	TILEOUT(Y0, X0)
	TILEOUT(Y1, X1)
	TILEOUT(Y2, X2)
	TILEOUT(Y3, X3)
	TILEOUT(Y4, X4)
	TILEOUT(Y5, X5)
	TILEOUT(Y6, X6)
	TILEOUT(Y7, X7)
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  v80t8row
	VZEROUPPER
	RET

// func q8_0Tile1x9VNNI(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q8_0Tile1x9VNNI(SB), NOSPLIT, $64-72
	VTILEARGS

v80t9row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	TILESTART
	TESTQ CX, CX
	JEQ   v80t9done

v80t9loop:
	TILESCALEW((SI))
	TILESCALE8(0, 0)
	TILESCALE8(32, 32)
	VQ8W
	VTOK(0, 0, Y0)
	VTOK(32, 4, Y1)
	VTOK(64, 8, Y2)
	VTOK(96, 12, Y3)
	VTOK(128, 16, Y4)
	VTOK(160, 20, Y5)
	VTOK(192, 24, Y6)
	VTOK(224, 28, Y7)
	VTOK(256, 32, Y8)
	TILENEXT(34, 288, 36)
	JNZ   v80t9loop

v80t9done:
	MOVQ DI, AX
	TILEOUT(Y0, X0)
	TILEOUT(Y1, X1)
	TILEOUT(Y2, X2)
	TILEOUT(Y3, X3)
	TILEOUT(Y4, X4)
	TILEOUT(Y5, X5)
	TILEOUT(Y6, X6)
	TILEOUT(Y7, X7)
	TILEOUT(Y8, X8)
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  v80t9row
	VZEROUPPER
	RET

// func q8_0Tile1x10VNNI(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q8_0Tile1x10VNNI(SB), NOSPLIT, $64-72
	VTILEARGS

v80t10row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	TILESTART
	TESTQ CX, CX
	JEQ   v80t10done

v80t10loop:
	TILESCALEW((SI))
	TILESCALE8(0, 0)
	TILESCALE8(32, 32)
	VQ8W
	VTOK(0, 0, Y0)
	VTOK(32, 4, Y1)
	VTOK(64, 8, Y2)
	VTOK(96, 12, Y3)
	VTOK(128, 16, Y4)
	VTOK(160, 20, Y5)
	VTOK(192, 24, Y6)
	VTOK(224, 28, Y7)
	VTOK(256, 32, Y8)
	VTOK(288, 36, Y9)
	TILENEXT(34, 320, 40)
	JNZ   v80t10loop

v80t10done:
	MOVQ DI, AX
	TILEOUT(Y0, X0)
	TILEOUT(Y1, X1)
	TILEOUT(Y2, X2)
	TILEOUT(Y3, X3)
	TILEOUT(Y4, X4)
	TILEOUT(Y5, X5)
	TILEOUT(Y6, X6)
	TILEOUT(Y7, X7)
	TILEOUT(Y8, X8)
	TILEOUT(Y9, X9)
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  v80t10row
	VZEROUPPER
	RET
