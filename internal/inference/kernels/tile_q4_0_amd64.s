//go:build !purego

#include "textflag.h"
#include "tile_amd64.h"

// The one-row Q4_0 kernels; tile_amd64.h describes them.

// func q4_0Tile1x1(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)
TEXT ·q4_0Tile1x1(SB), NOSPLIT, $0-72
	TILEARGS

q40t1row:
	VXORPS Y0, Y0, Y0
	VXORPS Y11, Y11, Y11
	TILESTART
	TESTQ CX, CX
	JEQ   q40t1done

q40t1loop:
	Q4SCALE1((SI), 0)
	Q4W(2(SI), X10, Y10)
	Q4PROD(0, Y10)
	VFMADD231PS Y13, Y14, Y0
	TILENEXT(18, 32, 4)
	JNZ   q40t1loop

q40t1done:
	MOVQ DI, AX
	TILEOUTC(Y0, X0, X11)
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  q40t1row
	VZEROUPPER
	RET

// func q4_0Tile1x1Exact(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)
TEXT ·q4_0Tile1x1Exact(SB), NOSPLIT, $0-72
	TILEARGS

q40x1row:
	VXORPS Y0, Y0, Y0
	TILESTART
	TESTQ CX, CX
	JEQ   q40x1done

q40x1loop:
	TILESCALE1((SI), 0)
	Q4W(2(SI), X10, Y10)
	Q4PRODX(0, Y10)
	VFMADD231PS Y13, Y14, Y0
	TILENEXTX(18, 32, 4)
	JNZ   q40x1loop

q40x1done:
	MOVQ DI, AX
	TILEOUT(Y0, X0)
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  q40x1row
	VZEROUPPER
	RET

// func q4_0Tile1x2(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)
TEXT ·q4_0Tile1x2(SB), NOSPLIT, $64-72
	TILEARGS

q40t2row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y11, Y11, Y11
	TILESTART
	TESTQ CX, CX
	JEQ   q40t2done

q40t2loop:
	TILESCALEW((SI))
	Q4CORR(0, Y11)
	TILESCALE8(0, 0)
	Q4W(2(SI), X10, Y10)
	Q4TOK(0, 0, Y0)
	Q4TOK(32, 4, Y1)
	TILENEXT(18, 64, 8)
	JNZ   q40t2loop

q40t2done:
	VMOVUPS Y11, 0(SP)
	MOVQ DI, AX
	TILEOUTC(Y0, X0, 0(SP))
	TILEOUTC(Y1, X1, 4(SP))
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  q40t2row
	VZEROUPPER
	RET

// func q4_0Tile1x3(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)
TEXT ·q4_0Tile1x3(SB), NOSPLIT, $64-72
	TILEARGS

q40t3row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y11, Y11, Y11
	TILESTART
	TESTQ CX, CX
	JEQ   q40t3done

q40t3loop:
	TILESCALEW((SI))
	Q4CORR(0, Y11)
	TILESCALE8(0, 0)
	Q4W(2(SI), X10, Y10)
	Q4TOK(0, 0, Y0)
	Q4TOK(32, 4, Y1)
	Q4TOK(64, 8, Y2)
	TILENEXT(18, 96, 12)
	JNZ   q40t3loop

q40t3done:
	VMOVUPS Y11, 0(SP)
	MOVQ DI, AX
	TILEOUTC(Y0, X0, 0(SP))
	TILEOUTC(Y1, X1, 4(SP))
	TILEOUTC(Y2, X2, 8(SP))
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  q40t3row
	VZEROUPPER
	RET

// func q4_0Tile1x4(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)
TEXT ·q4_0Tile1x4(SB), NOSPLIT, $64-72
	TILEARGS

q40t4row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y11, Y11, Y11
	TILESTART
	TESTQ CX, CX
	JEQ   q40t4done

q40t4loop:
	TILESCALEW((SI))
	Q4CORR(0, Y11)
	TILESCALE8(0, 0)
	Q4W(2(SI), X10, Y10)
	Q4TOK(0, 0, Y0)
	Q4TOK(32, 4, Y1)
	Q4TOK(64, 8, Y2)
	Q4TOK(96, 12, Y3)
	TILENEXT(18, 128, 16)
	JNZ   q40t4loop

q40t4done:
	VMOVUPS Y11, 0(SP)
	MOVQ DI, AX
	TILEOUTC(Y0, X0, 0(SP))
	TILEOUTC(Y1, X1, 4(SP))
	TILEOUTC(Y2, X2, 8(SP))
	TILEOUTC(Y3, X3, 12(SP))
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  q40t4row
	VZEROUPPER
	RET

// func q4_0Tile1x5(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)
TEXT ·q4_0Tile1x5(SB), NOSPLIT, $64-72
	TILEARGS

q40t5row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y11, Y11, Y11
	TILESTART
	TESTQ CX, CX
	JEQ   q40t5done

q40t5loop:
	TILESCALEW((SI))
	Q4CORR(0, Y11)
	TILESCALE8(0, 0)
	Q4W(2(SI), X10, Y10)
	Q4TOK(0, 0, Y0)
	Q4TOK(32, 4, Y1)
	Q4TOK(64, 8, Y2)
	Q4TOK(96, 12, Y3)
	Q4TOK(128, 16, Y4)
	TILENEXT(18, 160, 20)
	JNZ   q40t5loop

q40t5done:
	VMOVUPS Y11, 0(SP)
	MOVQ DI, AX
	TILEOUTC(Y0, X0, 0(SP))
	TILEOUTC(Y1, X1, 4(SP))
	TILEOUTC(Y2, X2, 8(SP))
	TILEOUTC(Y3, X3, 12(SP))
	TILEOUTC(Y4, X4, 16(SP))
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  q40t5row
	VZEROUPPER
	RET

// func q4_0Tile1x6(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)
TEXT ·q4_0Tile1x6(SB), NOSPLIT, $64-72
	TILEARGS

q40t6row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y11, Y11, Y11
	TILESTART
	TESTQ CX, CX
	JEQ   q40t6done

q40t6loop:
	TILESCALEW((SI))
	Q4CORR(0, Y11)
	TILESCALE8(0, 0)
	Q4W(2(SI), X10, Y10)
	Q4TOK(0, 0, Y0)
	Q4TOK(32, 4, Y1)
	Q4TOK(64, 8, Y2)
	Q4TOK(96, 12, Y3)
	Q4TOK(128, 16, Y4)
	Q4TOK(160, 20, Y5)
	TILENEXT(18, 192, 24)
	JNZ   q40t6loop

q40t6done:
	VMOVUPS Y11, 0(SP)
	MOVQ DI, AX
	TILEOUTC(Y0, X0, 0(SP))
	TILEOUTC(Y1, X1, 4(SP))
	TILEOUTC(Y2, X2, 8(SP))
	TILEOUTC(Y3, X3, 12(SP))
	TILEOUTC(Y4, X4, 16(SP))
	TILEOUTC(Y5, X5, 20(SP))
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  q40t6row
	VZEROUPPER
	RET

// func q4_0Tile1x7(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)
TEXT ·q4_0Tile1x7(SB), NOSPLIT, $64-72
	TILEARGS

q40t7row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y11, Y11, Y11
	TILESTART
	TESTQ CX, CX
	JEQ   q40t7done

q40t7loop:
	TILESCALEW((SI))
	Q4CORR(0, Y11)
	TILESCALE8(0, 0)
	Q4W(2(SI), X10, Y10)
	Q4TOK(0, 0, Y0)
	Q4TOK(32, 4, Y1)
	Q4TOK(64, 8, Y2)
	Q4TOK(96, 12, Y3)
	Q4TOK(128, 16, Y4)
	Q4TOK(160, 20, Y5)
	Q4TOK(192, 24, Y6)
	TILENEXT(18, 224, 28)
	JNZ   q40t7loop

q40t7done:
	VMOVUPS Y11, 0(SP)
	MOVQ DI, AX
	TILEOUTC(Y0, X0, 0(SP))
	TILEOUTC(Y1, X1, 4(SP))
	TILEOUTC(Y2, X2, 8(SP))
	TILEOUTC(Y3, X3, 12(SP))
	TILEOUTC(Y4, X4, 16(SP))
	TILEOUTC(Y5, X5, 20(SP))
	TILEOUTC(Y6, X6, 24(SP))
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  q40t7row
	VZEROUPPER
	RET

// func q4_0Tile1x8(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)
TEXT ·q4_0Tile1x8(SB), NOSPLIT, $64-72
	TILEARGS

q40t8row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y11, Y11, Y11
	TILESTART
	TESTQ CX, CX
	JEQ   q40t8done

q40t8loop:
	TILESCALEW((SI))
	Q4CORR(0, Y11)
	TILESCALE8(0, 0)
	Q4W(2(SI), X10, Y10)
	Q4TOK(0, 0, Y0)
	Q4TOK(32, 4, Y1)
	Q4TOK(64, 8, Y2)
	Q4TOK(96, 12, Y3)
	Q4TOK(128, 16, Y4)
	Q4TOK(160, 20, Y5)
	Q4TOK(192, 24, Y6)
	Q4TOK(224, 28, Y7)
	TILENEXT(18, 256, 32)
	JNZ   q40t8loop

q40t8done:
	VMOVUPS Y11, 0(SP)
	MOVQ DI, AX
	TILEOUTC(Y0, X0, 0(SP))
	TILEOUTC(Y1, X1, 4(SP))
	TILEOUTC(Y2, X2, 8(SP))
	TILEOUTC(Y3, X3, 12(SP))
	TILEOUTC(Y4, X4, 16(SP))
	TILEOUTC(Y5, X5, 20(SP))
	TILEOUTC(Y6, X6, 24(SP))
	TILEOUTC(Y7, X7, 28(SP))
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  q40t8row
	VZEROUPPER
	RET

// func q4_0Tile1x9(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)
TEXT ·q4_0Tile1x9(SB), NOSPLIT, $64-72
	TILEARGS

q40t9row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	TILESTART
	TESTQ CX, CX
	JEQ   q40t9done

q40t9loop:
	TILESCALEW((SI))
	Q4CORR(0, Y11)
	Q4CORR(32, Y12)
	TILESCALE8(0, 0)
	TILESCALE8(32, 32)
	Q4W(2(SI), X10, Y10)
	Q4TOK(0, 0, Y0)
	Q4TOK(32, 4, Y1)
	Q4TOK(64, 8, Y2)
	Q4TOK(96, 12, Y3)
	Q4TOK(128, 16, Y4)
	Q4TOK(160, 20, Y5)
	Q4TOK(192, 24, Y6)
	Q4TOK(224, 28, Y7)
	Q4TOK(256, 32, Y8)
	TILENEXT(18, 288, 36)
	JNZ   q40t9loop

q40t9done:
	VMOVUPS Y11, 0(SP)
	VMOVUPS Y12, 32(SP)
	MOVQ DI, AX
	TILEOUTC(Y0, X0, 0(SP))
	TILEOUTC(Y1, X1, 4(SP))
	TILEOUTC(Y2, X2, 8(SP))
	TILEOUTC(Y3, X3, 12(SP))
	TILEOUTC(Y4, X4, 16(SP))
	TILEOUTC(Y5, X5, 20(SP))
	TILEOUTC(Y6, X6, 24(SP))
	TILEOUTC(Y7, X7, 28(SP))
	TILEOUTC(Y8, X8, 32(SP))
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  q40t9row
	VZEROUPPER
	RET

// func q4_0Tile1x10(w *byte, stride int, x *int8, d *float32, c *float32, nb int, out *float32, ostride int, steps int)
TEXT ·q4_0Tile1x10(SB), NOSPLIT, $64-72
	TILEARGS

q40t10row:
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
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	TILESTART
	TESTQ CX, CX
	JEQ   q40t10done

q40t10loop:
	TILESCALEW((SI))
	Q4CORR(0, Y11)
	Q4CORR(32, Y12)
	TILESCALE8(0, 0)
	TILESCALE8(32, 32)
	Q4W(2(SI), X10, Y10)
	Q4TOK(0, 0, Y0)
	Q4TOK(32, 4, Y1)
	Q4TOK(64, 8, Y2)
	Q4TOK(96, 12, Y3)
	Q4TOK(128, 16, Y4)
	Q4TOK(160, 20, Y5)
	Q4TOK(192, 24, Y6)
	Q4TOK(224, 28, Y7)
	Q4TOK(256, 32, Y8)
	Q4TOK(288, 36, Y9)
	TILENEXT(18, 320, 40)
	JNZ   q40t10loop

q40t10done:
	VMOVUPS Y11, 0(SP)
	VMOVUPS Y12, 32(SP)
	MOVQ DI, AX
	TILEOUTC(Y0, X0, 0(SP))
	TILEOUTC(Y1, X1, 4(SP))
	TILEOUTC(Y2, X2, 8(SP))
	TILEOUTC(Y3, X3, 12(SP))
	TILEOUTC(Y4, X4, 16(SP))
	TILEOUTC(Y5, X5, 20(SP))
	TILEOUTC(Y6, X6, 24(SP))
	TILEOUTC(Y7, X7, 28(SP))
	TILEOUTC(Y8, X8, 32(SP))
	TILEOUTC(Y9, X9, 36(SP))
	ADDQ $4, DI // SI is already at the next row
	DECQ R14
	JNZ  q40t10row
	VZEROUPPER
	RET
