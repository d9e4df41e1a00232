//go:build !purego

#include "textflag.h"
#include "tile_amd64.h"

// The one-row Q8_0 kernels; tile_amd64.h describes them.

// func q8_0Tile1x1(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q8_0Tile1x1(SB), NOSPLIT, $0-72
	TILEARGS

q80t1row:
	VXORPS Y0, Y0, Y0
	TILESTART
	TESTQ CX, CX
	JEQ   q80t1done

q80t1loop:
	TILESCALE1((SI), 0)
	Q8W
	Q8PROD(0)
	VFMADD231PS Y13, Y14, Y0
	TILENEXT(34, 32, 4)
	JNZ   q80t1loop

q80t1done:
	MOVQ DI, AX
	TILEOUT(Y0, X0)
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  q80t1row
	VZEROUPPER
	RET

// func q8_0Tile1x2(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q8_0Tile1x2(SB), NOSPLIT, $64-72
	TILEARGS

q80t2row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	TILESTART
	TESTQ CX, CX
	JEQ   q80t2done

q80t2loop:
	TILESCALEW((SI))
	TILESCALE8(0, 0)
	Q8W
	Q8TOK(0, 0, Y0)
	Q8TOK(32, 4, Y1)
	TILENEXT(34, 64, 8)
	JNZ   q80t2loop

q80t2done:
	MOVQ DI, AX
	TILEOUT(Y0, X0)
	TILEOUT(Y1, X1)
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  q80t2row
	VZEROUPPER
	RET

// func q8_0Tile1x3(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q8_0Tile1x3(SB), NOSPLIT, $64-72
	TILEARGS

q80t3row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	TILESTART
	TESTQ CX, CX
	JEQ   q80t3done

q80t3loop:
	TILESCALEW((SI))
	TILESCALE8(0, 0)
	Q8W
	Q8TOK(0, 0, Y0)
	Q8TOK(32, 4, Y1)
	Q8TOK(64, 8, Y2)
	TILENEXT(34, 96, 12)
	JNZ   q80t3loop

q80t3done:
	MOVQ DI, AX
	TILEOUT(Y0, X0)
	TILEOUT(Y1, X1)
	TILEOUT(Y2, X2)
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  q80t3row
	VZEROUPPER
	RET

// func q8_0Tile1x4(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q8_0Tile1x4(SB), NOSPLIT, $64-72
	TILEARGS

q80t4row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	TILESTART
	TESTQ CX, CX
	JEQ   q80t4done

q80t4loop:
	TILESCALEW((SI))
	TILESCALE8(0, 0)
	Q8W
	Q8TOK(0, 0, Y0)
	Q8TOK(32, 4, Y1)
	Q8TOK(64, 8, Y2)
	Q8TOK(96, 12, Y3)
	TILENEXT(34, 128, 16)
	JNZ   q80t4loop

q80t4done:
	MOVQ DI, AX
	TILEOUT(Y0, X0)
	TILEOUT(Y1, X1)
	TILEOUT(Y2, X2)
	TILEOUT(Y3, X3)
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  q80t4row
	VZEROUPPER
	RET

// func q8_0Tile1x5(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q8_0Tile1x5(SB), NOSPLIT, $64-72
	TILEARGS

q80t5row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	TILESTART
	TESTQ CX, CX
	JEQ   q80t5done

q80t5loop:
	TILESCALEW((SI))
	TILESCALE8(0, 0)
	Q8W
	Q8TOK(0, 0, Y0)
	Q8TOK(32, 4, Y1)
	Q8TOK(64, 8, Y2)
	Q8TOK(96, 12, Y3)
	Q8TOK(128, 16, Y4)
	TILENEXT(34, 160, 20)
	JNZ   q80t5loop

q80t5done:
	MOVQ DI, AX
	TILEOUT(Y0, X0)
	TILEOUT(Y1, X1)
	TILEOUT(Y2, X2)
	TILEOUT(Y3, X3)
	TILEOUT(Y4, X4)
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  q80t5row
	VZEROUPPER
	RET

// func q8_0Tile1x6(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q8_0Tile1x6(SB), NOSPLIT, $64-72
	TILEARGS

q80t6row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	TILESTART
	TESTQ CX, CX
	JEQ   q80t6done

q80t6loop:
	TILESCALEW((SI))
	TILESCALE8(0, 0)
	Q8W
	Q8TOK(0, 0, Y0)
	Q8TOK(32, 4, Y1)
	Q8TOK(64, 8, Y2)
	Q8TOK(96, 12, Y3)
	Q8TOK(128, 16, Y4)
	Q8TOK(160, 20, Y5)
	TILENEXT(34, 192, 24)
	JNZ   q80t6loop

q80t6done:
	MOVQ DI, AX
	TILEOUT(Y0, X0)
	TILEOUT(Y1, X1)
	TILEOUT(Y2, X2)
	TILEOUT(Y3, X3)
	TILEOUT(Y4, X4)
	TILEOUT(Y5, X5)
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  q80t6row
	VZEROUPPER
	RET

// func q8_0Tile1x7(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q8_0Tile1x7(SB), NOSPLIT, $64-72
	TILEARGS

q80t7row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	TILESTART
	TESTQ CX, CX
	JEQ   q80t7done

q80t7loop:
	TILESCALEW((SI))
	TILESCALE8(0, 0)
	Q8W
	Q8TOK(0, 0, Y0)
	Q8TOK(32, 4, Y1)
	Q8TOK(64, 8, Y2)
	Q8TOK(96, 12, Y3)
	Q8TOK(128, 16, Y4)
	Q8TOK(160, 20, Y5)
	Q8TOK(192, 24, Y6)
	TILENEXT(34, 224, 28)
	JNZ   q80t7loop

q80t7done:
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
	JNZ  q80t7row
	VZEROUPPER
	RET

// func q8_0Tile1x8(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q8_0Tile1x8(SB), NOSPLIT, $64-72
	TILEARGS

q80t8row:
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
	JEQ   q80t8done

q80t8loop:
	TILESCALEW((SI))
	TILESCALE8(0, 0)
	Q8W
	Q8TOK(0, 0, Y0)
	Q8TOK(32, 4, Y1)
	Q8TOK(64, 8, Y2)
	Q8TOK(96, 12, Y3)
	Q8TOK(128, 16, Y4)
	Q8TOK(160, 20, Y5)
	Q8TOK(192, 24, Y6)
	Q8TOK(224, 28, Y7)
	TILENEXT(34, 256, 32)
	JNZ   q80t8loop

q80t8done:
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
	JNZ  q80t8row
	VZEROUPPER
	RET

// func q8_0Tile1x9(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q8_0Tile1x9(SB), NOSPLIT, $64-72
	TILEARGS

q80t9row:
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
	JEQ   q80t9done

q80t9loop:
	TILESCALEW((SI))
	TILESCALE8(0, 0)
	TILESCALE8(32, 32)
	Q8W
	Q8TOK(0, 0, Y0)
	Q8TOK(32, 4, Y1)
	Q8TOK(64, 8, Y2)
	Q8TOK(96, 12, Y3)
	Q8TOK(128, 16, Y4)
	Q8TOK(160, 20, Y5)
	Q8TOK(192, 24, Y6)
	Q8TOK(224, 28, Y7)
	Q8TOK(256, 32, Y8)
	TILENEXT(34, 288, 36)
	JNZ   q80t9loop

q80t9done:
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
	JNZ  q80t9row
	VZEROUPPER
	RET

// func q8_0Tile1x10(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q8_0Tile1x10(SB), NOSPLIT, $64-72
	TILEARGS

q80t10row:
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
	JEQ   q80t10done

q80t10loop:
	TILESCALEW((SI))
	TILESCALE8(0, 0)
	TILESCALE8(32, 32)
	Q8W
	Q8TOK(0, 0, Y0)
	Q8TOK(32, 4, Y1)
	Q8TOK(64, 8, Y2)
	Q8TOK(96, 12, Y3)
	Q8TOK(128, 16, Y4)
	Q8TOK(160, 20, Y5)
	Q8TOK(192, 24, Y6)
	Q8TOK(224, 28, Y7)
	Q8TOK(256, 32, Y8)
	Q8TOK(288, 36, Y9)
	TILENEXT(34, 320, 40)
	JNZ   q80t10loop

q80t10done:
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
	JNZ  q80t10row
	VZEROUPPER
	RET
