// Macros shared by tile_q8_0_amd64.s and tile_q4_0_amd64.s.

// One-row Q8_0 and Q4_0 kernels for groups of T = 1…10 tokens (q8_0Tile1x10
// is one row by ten tokens), over the packed activations of q8Tiles: token k
// of block b at 32·T·b + 32·k, its scale at 4·T·b + 4·k (for T = 1 the plain
// layout). Per block the weight row is expanded once (|w| and the sign for
// Q8_0, the unsigned nibbles for Q4_0) and its scale multiplied by the T
// activation scales with one or two vector multiplies into a stack scratch;
// then each token costs an activation load, a scale broadcast and the five
// vector instructions of the product. A decode step of up to ten tokens is
// so one sequential pass over the weights, which the hardware prefetcher
// follows, with the per-block overhead shared by all its tokens.
//
// Every (row, token) result is computed by the same arithmetic in every
// variant, so a token's result does not depend on how many other tokens
// share the call (batched decode equals single decode bit for bit): one
// float accumulator of eight lanes, per block acc += float(Σ)·(dw·dx),
// then the same horizontal sum; for Q4_0 plus one float of the offset
// correction, per block corr += dw·(−8·dx·Σx) (a lane of Q4CORR, or
// Q4SCALE1's scalar FMA, the same rounding), added last. (Taking the blocks in pairs, to halve the
// chain of dependent additions the one-token kernels wait on, measured no
// faster: Q4_0 1x1 14.5 MAC/ns either way cache-resident, and no change in
// a decode step's CPU time.)
//
// A call covers `steps` rows in a row, writing token k's value of row r at
// out + 4·r + k·ostride bytes, so a decode step makes one call per chunk of
// rows.
//
// Registers: SI weight row, R8 x, R9 activation scales, R10 Q4_0 offset
// corrections, CX blocks left, R11–R13 the group's x, scale
// and correction pointers, R14 rows left, DI out, DX out stride, AX scratch.
// Y0–Y9 token accumulators; Y10 |w| (Q8_0) or the nibbles (Q4_0), Y11 w
// (Q8_0) or the Q4_0 corrections of tokens 0–7 (Y12 of tokens 8 and 9),
// Y12 activation (Q8_0), Y13 product, Y14 scale, Y15 int16 ones.

DATA tileNibbleMask<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA tileNibbleMask<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA tileNibbleMask<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA tileNibbleMask<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL tileNibbleMask<>(SB), RODATA|NOPTR, $32

#define TILEARGS \
	MOVQ     w+0(FP), SI \
	MOVQ     x+16(FP), R11 \
	MOVQ     d+24(FP), R12 \
	MOVQ     c+32(FP), R13 \
	MOVQ     out+48(FP), DI \
	MOVQ     ostride+56(FP), DX \
	MOVQ     steps+64(FP), R14 \
	VPCMPEQW Y15, Y15, Y15 \
	VPSRLW   $15, Y15, Y15

// TILESTART points at the group's first block for the next row.
#define TILESTART \
	MOVQ R11, R8 \
	MOVQ R12, R9 \
	MOVQ R13, R10 \
	MOVQ nb+40(FP), CX

// The Q4_0 corrections at R10 are laid out like the scales (one float per
// token and block); TILENEXTX steps q4_0Tile1x1Exact's pair sums, which
// mirror the activation.
#define TILENEXT(wstep, xstep, dstep) \
	ADDQ $wstep, SI \
	ADDQ $xstep, R8 \
	ADDQ $dstep, R10 \
	ADDQ $dstep, R9 \
	DECQ CX

#define TILENEXTX(wstep, xstep, dstep) \
	ADDQ $wstep, SI \
	ADDQ $xstep, R8 \
	ADDQ $xstep, R10 \
	ADDQ $dstep, R9 \
	DECQ CX

// TILEOUT stores acc's horizontal sum at (AX) and moves AX to the next
// token.
#define TILEOUT(y, x) \
	VEXTRACTF128 $1, y, X13 \
	VADDPS       X13, x, x \
	VHADDPS      x, x, x \
	VHADDPS      x, x, x \
	VMOVSS       x, (AX) \
	ADDQ         DX, AX

// TILEOUTC is TILEOUT plus the token's Q4_0 offset correction c (a
// register or the frame slot the kernel stored it to) after the lanes'
// sum, the order of every Q4_0 kernel.
#define TILEOUTC(y, x, c) \
	VEXTRACTF128 $1, y, X13 \
	VADDPS       X13, x, x \
	VHADDPS      x, x, x \
	VHADDPS      x, x, x \
	VADDSS       c, x, x \
	VMOVSS       x, (AX) \
	ADDQ         DX, AX

// TILESCALEW broadcasts the f16 weight scale at wm into Y13.
#define TILESCALEW(wm) \
	MOVWLZX      wm, AX \
	VMOVD        AX, X13 \
	VCVTPH2PS    X13, X13 \
	VBROADCASTSS X13, Y13

// TILESCALE8 stores Y13 times the eight activation scales at do(R9) at
// so(SP).
#define TILESCALE8(do, so) \
	VMULPS  do(R9), Y13, Y14 \
	VMOVUPS Y14, so(SP)

// TILESCALE1 broadcasts the f16 weight scale at wm times the one
// activation scale at do(R9) into Y14.
#define TILESCALE1(wm, do) \
	MOVWLZX      wm, AX \
	VMOVD        AX, X13 \
	VCVTPH2PS    X13, X13 \
	VMULSS       do(R9), X13, X14 \
	VBROADCASTSS X14, Y14

// Q4SCALE1 is TILESCALE1 for Q4_0, also adding the weight scale times the
// token's block correction at (R10) to X11.
#define Q4SCALE1(wm, do) \
	MOVWLZX      wm, AX \
	VMOVD        AX, X13 \
	VCVTPH2PS    X13, X13 \
	VFMADD231SS  (R10), X13, X11 \
	VMULSS       do(R9), X13, X14 \
	VBROADCASTSS X14, Y14

// Q4CORR adds the weight scale broadcast in Y13 (TILESCALEW) times the
// eight tokens' block corrections at co(R10) to acc, lane k token k.
#define Q4CORR(co, acc) \
	VFMADD231PS co(R10), Y13, acc

// Q8W expands the Q8_0 block's weights: w in Y11, |w| in Y10.
#define Q8W \
	VMOVDQU 2(SI), Y11 \
	VPABSB  Y11, Y10

// Q8PROD leaves the block product with the activation at xo(R8) in Y13 as
// floats: the sign of w moves onto x so that VPMADDUBSW can take |w| as its
// unsigned operand, as ggml does.
#define Q8PROD(xo) \
	VMOVDQU    xo(R8), Y12 \
	VPSIGNB    Y11, Y12, Y13 \
	VPMADDUBSW Y13, Y10, Y13 \
	VPMADDWD   Y15, Y13, Y13 \
	VCVTDQ2PS  Y13, Y13

// Q8TOK adds the product with the token at xo(R8), scaled by so(SP), to acc.
#define Q8TOK(xo, so, acc) \
	Q8PROD(xo) \
	VBROADCASTSS so(SP), Y14 \
	VFMADD231PS  Y13, Y14, acc

// Q4W expands the 16 bytes of a Q4_0 block at wm into 32 unsigned nibbles
// in y (low nibbles are values 0–15 of the block, high nibbles 16–31).
#define Q4W(wm, x, y) \
	VMOVDQU     wm, x \
	VPSRLW      $4, x, X13 \
	VINSERTI128 $1, X13, y, y \
	VPAND       tileNibbleMask<>(SB), y, y

// Q4PROD leaves the product of the unsigned nibbles in wy with the
// activation at xo(R8) in Y13 as floats: Σ q·x exactly. The −8 offset of
// Q4_0 comes back once per (row, token) as Σ_b dw·(−8·dx·Σx), summed block
// by block in its own float (Q4CORR, Q4SCALE1) and added after the lanes'
// sum: one vector instruction and one load fewer per block and token than
// subtracting it from every block's integers.
#define Q4PROD(xo, wy) \
	VPMADDUBSW xo(R8), wy, Y13 \
	VPMADDWD   Y15, Y13, Y13 \
	VCVTDQ2PS  Y13, Y13

// Q4PRODX is Q4PROD minus the token's 8·x pair sums at xo(R10) before the
// conversion, Σ (q−8)·x exactly: the arithmetic of q4_0Tile1x1Exact and of
// the VNNI tiles.
#define Q4PRODX(xo, wy) \
	VPMADDUBSW xo(R8), wy, Y13 \
	VPSUBW     xo(R10), Y13, Y13 \
	VPMADDWD   Y15, Y13, Y13 \
	VCVTDQ2PS  Y13, Y13

// Q4TOK adds one block's product (nibbles in Y10) scaled by so(SP) to acc.
#define Q4TOK(xo, so, acc) \
	Q4PROD(xo, Y10) \
	VBROADCASTSS so(SP), Y14 \
	VFMADD231PS  Y13, Y14, acc
