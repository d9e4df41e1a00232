//go:build !purego

#include "textflag.h"
#include "tile_amd64.h"
#include "tile_vnni_amd64.h"

// The one-row Q4_0 kernels for AVX-512 VNNI; tile_vnni_amd64.h describes
// them, one kernel per token count as in tile_q4_0_amd64.s.

// func q4_0Tile1x1VNNI(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q4_0Tile1x1VNNI(SB), NOSPLIT, $0-72
	VTILEARGS

v40t1row:
	VXORPS Y0, Y0, Y0
	TILESTART
	TESTQ CX, CX
	JEQ   v40t1done

v40t1loop:
	TILESCALE1((SI), 0)
	VQ4W
	VPROD(0)
	VFMADD231PS Y13, Y14, Y0
	TILENEXT(18, 32, 4)
	JNZ   v40t1loop

v40t1done:
	MOVQ DI, AX
	TILEOUT(Y0, X0)
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  v40t1row
	VZEROUPPER
	RET

// func q4_0Tile1x2VNNI(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q4_0Tile1x2VNNI(SB), NOSPLIT, $64-72
	VTILEARGS

v40t2row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	TILESTART
	TESTQ CX, CX
	JEQ   v40t2done

v40t2loop:
	TILESCALEW((SI))
	TILESCALE8(0, 0)
	VQ4W
	VTOK(0, 0, Y0)
	VTOK(32, 4, Y1)
	TILENEXT(18, 64, 8)
	JNZ   v40t2loop

v40t2done:
	MOVQ DI, AX
	TILEOUT(Y0, X0)
	TILEOUT(Y1, X1)
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  v40t2row
	VZEROUPPER
	RET

// func q4_0Tile1x3VNNI(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q4_0Tile1x3VNNI(SB), NOSPLIT, $64-72
	VTILEARGS

v40t3row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	TILESTART
	TESTQ CX, CX
	JEQ   v40t3done

v40t3loop:
	TILESCALEW((SI))
	TILESCALE8(0, 0)
	VQ4W
	VTOK(0, 0, Y0)
	VTOK(32, 4, Y1)
	VTOK(64, 8, Y2)
	TILENEXT(18, 96, 12)
	JNZ   v40t3loop

v40t3done:
	MOVQ DI, AX
	TILEOUT(Y0, X0)
	TILEOUT(Y1, X1)
	TILEOUT(Y2, X2)
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  v40t3row
	VZEROUPPER
	RET

// func q4_0Tile1x4VNNI(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q4_0Tile1x4VNNI(SB), NOSPLIT, $64-72
	VTILEARGS

v40t4row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	TILESTART
	TESTQ CX, CX
	JEQ   v40t4done

v40t4loop:
	TILESCALEW((SI))
	TILESCALE8(0, 0)
	VQ4W
	VTOK(0, 0, Y0)
	VTOK(32, 4, Y1)
	VTOK(64, 8, Y2)
	VTOK(96, 12, Y3)
	TILENEXT(18, 128, 16)
	JNZ   v40t4loop

v40t4done:
	MOVQ DI, AX
	TILEOUT(Y0, X0)
	TILEOUT(Y1, X1)
	TILEOUT(Y2, X2)
	TILEOUT(Y3, X3)
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  v40t4row
	VZEROUPPER
	RET

// func q4_0Tile1x5VNNI(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q4_0Tile1x5VNNI(SB), NOSPLIT, $64-72
	VTILEARGS

v40t5row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	TILESTART
	TESTQ CX, CX
	JEQ   v40t5done

v40t5loop:
	TILESCALEW((SI))
	TILESCALE8(0, 0)
	VQ4W
	VTOK(0, 0, Y0)
	VTOK(32, 4, Y1)
	VTOK(64, 8, Y2)
	VTOK(96, 12, Y3)
	VTOK(128, 16, Y4)
	TILENEXT(18, 160, 20)
	JNZ   v40t5loop

v40t5done:
	MOVQ DI, AX
	TILEOUT(Y0, X0)
	TILEOUT(Y1, X1)
	TILEOUT(Y2, X2)
	TILEOUT(Y3, X3)
	TILEOUT(Y4, X4)
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  v40t5row
	VZEROUPPER
	RET

// func q4_0Tile1x6VNNI(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q4_0Tile1x6VNNI(SB), NOSPLIT, $64-72
	VTILEARGS

v40t6row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	TILESTART
	TESTQ CX, CX
	JEQ   v40t6done

v40t6loop:
	TILESCALEW((SI))
	TILESCALE8(0, 0)
	VQ4W
	VTOK(0, 0, Y0)
	VTOK(32, 4, Y1)
	VTOK(64, 8, Y2)
	VTOK(96, 12, Y3)
	VTOK(128, 16, Y4)
	VTOK(160, 20, Y5)
	TILENEXT(18, 192, 24)
	JNZ   v40t6loop

v40t6done:
	MOVQ DI, AX
	TILEOUT(Y0, X0)
	TILEOUT(Y1, X1)
	TILEOUT(Y2, X2)
	TILEOUT(Y3, X3)
	TILEOUT(Y4, X4)
	TILEOUT(Y5, X5)
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  v40t6row
	VZEROUPPER
	RET

// func q4_0Tile1x7VNNI(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q4_0Tile1x7VNNI(SB), NOSPLIT, $64-72
	VTILEARGS

v40t7row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	TILESTART
	TESTQ CX, CX
	JEQ   v40t7done

v40t7loop:
	TILESCALEW((SI))
	TILESCALE8(0, 0)
	VQ4W
	VTOK(0, 0, Y0)
	VTOK(32, 4, Y1)
	VTOK(64, 8, Y2)
	VTOK(96, 12, Y3)
	VTOK(128, 16, Y4)
	VTOK(160, 20, Y5)
	VTOK(192, 24, Y6)
	TILENEXT(18, 224, 28)
	JNZ   v40t7loop

v40t7done:
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
	JNZ  v40t7row
	VZEROUPPER
	RET

// func q4_0Tile1x8VNNI(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q4_0Tile1x8VNNI(SB), NOSPLIT, $64-72
	VTILEARGS

v40t8row:
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
	JEQ   v40t8done

v40t8loop:
	TILESCALEW((SI))
	TILESCALE8(0, 0)
	VQ4W
	VTOK(0, 0, Y0)
	VTOK(32, 4, Y1)
	VTOK(64, 8, Y2)
	VTOK(96, 12, Y3)
	VTOK(128, 16, Y4)
	VTOK(160, 20, Y5)
	VTOK(192, 24, Y6)
	VTOK(224, 28, Y7)
	TILENEXT(18, 256, 32)
	JNZ   v40t8loop

v40t8done:
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
	JNZ  v40t8row
	VZEROUPPER
	RET

// func q4_0Tile1x9VNNI(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q4_0Tile1x9VNNI(SB), NOSPLIT, $64-72
	VTILEARGS

v40t9row:
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
	JEQ   v40t9done

v40t9loop:
	TILESCALEW((SI))
	TILESCALE8(0, 0)
	TILESCALE8(32, 32)
	VQ4W
	VTOK(0, 0, Y0)
	VTOK(32, 4, Y1)
	VTOK(64, 8, Y2)
	VTOK(96, 12, Y3)
	VTOK(128, 16, Y4)
	VTOK(160, 20, Y5)
	VTOK(192, 24, Y6)
	VTOK(224, 28, Y7)
	VTOK(256, 32, Y8)
	TILENEXT(18, 288, 36)
	JNZ   v40t9loop

v40t9done:
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
	JNZ  v40t9row
	VZEROUPPER
	RET

// func q4_0Tile1x10VNNI(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q4_0Tile1x10VNNI(SB), NOSPLIT, $64-72
	VTILEARGS

v40t10row:
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
	JEQ   v40t10done

v40t10loop:
	TILESCALEW((SI))
	TILESCALE8(0, 0)
	TILESCALE8(32, 32)
	VQ4W
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
	TILENEXT(18, 320, 40)
	JNZ   v40t10loop

v40t10done:
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
	JNZ  v40t10row
	VZEROUPPER
	RET
