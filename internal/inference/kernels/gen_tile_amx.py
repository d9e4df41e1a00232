# gen_tile_amx.py writes tile_amx_amd64.s: the AMX-INT8 kernels over the
# packed Q8_0 and Q4_0 weights of the AVX-512 family (16-row groups,
# packed.go), one kernel per token count 2..10, with the signature of the
# packed VNNI kernels so that mulRowsPackedAsm calls either.
# Run it through `go generate ./internal/inference/kernels`.
#
# Why AMX fits the packed layout: a group's block is, after its 32 bytes
# of f16 scales, eight 64-byte chunks in which chunk j holds bytes
# [4j, 4j+4) of each of the 16 rows. That is exactly the layout of an AMX
# B tile of 8 rows × 64 bytes (K/4 rows of N·4 bytes, N = 16 rows of the
# matrix), so Q8_0 blocks are loaded as tiles straight from the packed
# weights. Q4_0 chunks hold nibbles: the kernel unpacks them into the same
# eight rows with the VNNI kernel's three instructions a chunk and stores
# them to the frame, from where the tile is loaded. The token group's
# activations (T tokens × 32 bytes a block, contiguous, q8Tiles) are the
# A tile as they lie. One TDPBSUD (signed activations × unsigned weights:
# Q8_0 words are stored XOR 0x80, Q4_0 nibbles are 0..15) gives the T × 16
# integer sums of the block; TILESTORED writes them to the frame, and the
# float steps follow per token as in the VNNI kernels: the sum plus the
# token's correction (−128·Σx or −8·Σx, q8Tiles.c8 and c4), converted,
# times the row scales times the token's scale, accumulated per row. The
# integer sums are exact and the float steps are the same instructions in
# the same order, so the results are the VNNI kernels' bits, and a token's
# result still does not depend on its batch.
#
# Blocks alternate between two sets of tiles (A in tmm0/tmm1, B in
# tmm2/tmm3, the sums in tmm4/tmm5) and two frame buffers, so that the
# next block's tile loads and product do not wait for the float steps of
# the one before.
#
# Go's assembler has no AMX mnemonics: the instructions are emitted as
# bytes by the encoder below (VEX, map 0F38), checked against GNU as when
# it was written.
#
# Registers: SI the weights, R8 the token group's activations, R9 their
# scales, R10 their corrections (walked by AX, BX, DX per group), CX the
# block counter, DI the output, R11 the frame's 64-byte aligned scratch,
# R12 the stride 64 (B tiles, sums), R13 the stride 32 (A tiles). The
# block count, output stride and groups left are read from the arguments.
# Z8/Z9 the block's sixteen row scales, Z10-Z19 temporaries, Z20-Z29 the
# tokens' float accumulators, Z31 0x0f in every byte (Q4_0), Z0-Z7 the
# unpacked chunks (Q4_0).

import os
import sys

REG = {'AX': 0, 'CX': 1, 'DX': 2, 'BX': 3, 'SP': 4, 'BP': 5, 'SI': 6, 'DI': 7,
       'R8': 8, 'R9': 9, 'R10': 10, 'R11': 11, 'R12': 12, 'R13': 13, 'R14': 14, 'R15': 15}


def vex3(X, B, vvvv, pp):
    # C4, then R̄X̄B̄ and map 0F38 (00010), then W=0, v̄vvv, L=0 and pp.
    return [0xC4, (1 << 7) | ((~X & 1) << 6) | ((~B & 1) << 5) | 0x02, ((~vvvv & 0xF) << 3) | pp]


def sibmem(reg, base, index, disp):
    b, i = REG[base], REG[index]
    assert i != 4
    if disp == 0 and (b & 7) != 5:
        mod, d = 0, []
    elif -128 <= disp <= 127:
        mod, d = 1, [disp & 0xFF]
    else:
        mod, d = 2, list((disp & 0xFFFFFFFF).to_bytes(4, 'little'))
    return i >> 3, b >> 3, [(mod << 6) | (reg << 3) | 4, ((i & 7) << 3) | (b & 7)] + d


def tileloadd(t, base, index, disp=0):  # F2.0F38.W0 4B
    X, B, tail = sibmem(t, base, index, disp)
    return vex3(X, B, 0, 3) + [0x4B] + tail


def tilestored(t, base, index, disp=0):  # F3.0F38.W0 4B
    X, B, tail = sibmem(t, base, index, disp)
    return vex3(X, B, 0, 2) + [0x4B] + tail


def tdpbsud(c, a, b):  # F3.0F38.W0 5E: tmm c += signed tmm a × unsigned tmm b
    return vex3(0, 0, b, 2) + [0x5E, 0xC0 | (c << 3) | a]


def tilezero(t):  # F2.0F38.W0 49 /r
    return vex3(0, 0, 0, 3) + [0x49, 0xC0 | (t << 3)]


def ldtilecfg(base):  # NP.0F38.W0 49 /0
    b = REG[base]
    assert (b & 7) not in (4, 5)
    return vex3(0, b >> 3, 0, 0) + [0x49, b & 7]


TILERELEASE = [0xC4, 0xE2, 0x78, 0x49, 0xC0]


def raw(code, text):
    return '\t' + '; '.join('BYTE $0x%02x' % b for b in code) + ' // ' + text


BLOCK_BYTES = {'q8_0': 544, 'q4_0': 288}
# The VNNI kernels' prefetch distance: eight blocks ahead.
PREFETCH = {'q8_0': [4352 + 64 * i for i in range(9)], 'q4_0': [2304 + 64 * i for i in range(5)]}
BBUF = 0      # two 512-byte buffers of unpacked Q4_0 chunks
SUMS = 1024   # two T×64-byte buffers of integer sums


def frame(T):
    return SUMS + 2 * T * 64 + 64  # + 64 to align R11 to a cache line


def tiles(kind, T, p, out):
    # The tile work of the block at SI: its product into sums buffer p.
    a, b, c = p, 2 + p, 4 + p
    sums = SUMS + p * T * 64
    if kind == 'q4_0':
        for j in range(4):
            out.append('\tVPANDD %d(SI), Z31, Z%d' % (32 + 64 * j, j))
            out.append('\tVPSRLW $4, %d(SI), Z%d' % (32 + 64 * j, 4 + j))
            out.append('\tVPANDD Z31, Z%d, Z%d' % (4 + j, 4 + j))
        for j in range(8):
            out.append('\tVMOVDQU64 Z%d, %d(R11)' % (j, BBUF + 512 * p + 64 * j))
    for off in PREFETCH[kind]:
        out.append('\tPREFETCHT0 %d(SI)' % off)
    out.append(raw(tileloadd(a, 'AX', 'R13'), 'TILELOADD (AX)(R13*1), TMM%d' % a))
    if kind == 'q8_0':
        out.append(raw(tileloadd(b, 'SI', 'R12', 32), 'TILELOADD 32(SI)(R12*1), TMM%d' % b))
    else:
        out.append(raw(tileloadd(b, 'R11', 'R12', BBUF + 512 * p), 'TILELOADD %d(R11)(R12*1), TMM%d' % (BBUF + 512 * p, b)))
    out.append(raw(tilezero(c), 'TILEZERO TMM%d' % c))
    out.append(raw(tdpbsud(c, a, b), 'TDPBSUD TMM%d, TMM%d, TMM%d' % (b, a, c)))
    out.append(raw(tilestored(c, 'R11', 'R12', sums), 'TILESTORED TMM%d, %d(R11)(R12*1)' % (c, sums)))


def floats(kind, T, p, out):
    # The float steps of the block before the one at SI, whose sums are in
    # buffer p: they run one block behind the tile work, so that the sums'
    # trip through memory overlaps the next product.
    sums = SUMS + p * T * 64
    s = 8 + p
    out.append('\tVCVTPH2PS -%d(SI), Z%d' % (BLOCK_BYTES[kind], s))
    for t in range(T):
        zi, zs = 10 + (t % 5) * 2, 11 + (t % 5) * 2
        out.append('\tVPBROADCASTD %d(DX), Z%d' % (4 * t - 4 * T, zi))
        out.append('\tVPADDD %d(R11), Z%d, Z%d' % (sums + 64 * t, zi, zi))
        out.append('\tVCVTDQ2PS Z%d, Z%d' % (zi, zi))
        out.append('\tVMULPS.BCST %d(BX), Z%d, Z%d' % (4 * t - 4 * T, s, zs))
        out.append('\tVFMADD231PS Z%d, Z%d, Z%d' % (zs, zi, 20 + t))


def advance(kind, T, out):
    out.append('\tADDQ $%d, SI' % BLOCK_BYTES[kind])
    out.append('\tADDQ $%d, AX' % (32 * T))
    out.append('\tADDQ $%d, BX' % (4 * T))
    out.append('\tADDQ $%d, DX' % (4 * T))


def kernel(kind, T):
    name = '%sAMX%d' % (kind, T)
    lab = '%sa%d' % (kind.replace('_', ''), T)
    out = ['', '// func %s(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)' % name,
           'TEXT ·%s(SB), $%d-64' % (name, frame(T)),
           '\tMOVQ w+0(FP), SI', '\tMOVQ x+8(FP), R8', '\tMOVQ d+16(FP), R9', '\tMOVQ c+24(FP), R10',
           '\tMOVQ out+40(FP), DI',
           '\tLEAQ amxConfig%d<>(SB), AX' % T,
           raw(ldtilecfg('AX'), 'LDTILECFG (AX)'),
           '\tLEAQ 63(SP), R11', '\tANDQ $~63, R11',
           '\tMOVQ $64, R12', '\tMOVQ $32, R13']
    if kind == 'q4_0':
        out.append('\tVPBROADCASTQ amxNibbleMask<>(SB), Z31')
    out += ['', lab + 'group:']
    out += ['\tVPXORD Z%d, Z%d, Z%d' % (20 + t, 20 + t, 20 + t) for t in range(T)]
    out += ['\tMOVQ R8, AX', '\tMOVQ R9, BX', '\tMOVQ R10, DX', '\tMOVQ nb+32(FP), CX']
    # Block 0's tiles; then pairs of blocks (parity 1, 0), each with the
    # float steps of the block before; then, with an even count, one more
    # block; and last the float steps of the last block.
    tiles(kind, T, 0, out)
    advance(kind, T, out)
    out += ['\tDECQ CX', '\tCMPQ CX, $2', '\tJLT  %stail' % lab, '', lab + 'pair:']
    tiles(kind, T, 1, out)
    floats(kind, T, 0, out)
    advance(kind, T, out)
    tiles(kind, T, 0, out)
    floats(kind, T, 1, out)
    advance(kind, T, out)
    out += ['\tSUBQ $2, CX', '\tCMPQ CX, $2', '\tJGE  %spair' % lab, '', lab + 'tail:', '\tTESTQ CX, CX',
            '\tJZ   %slast0' % lab]
    tiles(kind, T, 1, out)
    floats(kind, T, 0, out)
    advance(kind, T, out)
    floats(kind, T, 1, out)
    out += ['\tJMP  %sdone' % lab, '', lab + 'last0:']
    floats(kind, T, 0, out)
    out += ['', lab + 'done:', '\tMOVQ ostride+48(FP), CX', '\tMOVQ DI, AX']
    for t in range(T):
        out.append('\tVMOVUPS Z%d, (AX)' % (20 + t))
        if t < T - 1:
            out.append('\tADDQ CX, AX')
    out += ['\tADDQ $64, DI // SI is already at the next group', '\tDECQ groups+56(FP)', '\tJNZ  %sgroup' % lab,
            raw(TILERELEASE, 'TILERELEASE'), '\tVZEROUPPER', '\tRET']
    return out


def config(T):
    # The 64-byte tile configuration: palette 1; tmm0/tmm1 T rows of 32
    # bytes (A), tmm2/tmm3 8 rows of 64 (B), tmm4/tmm5 T rows of 64 (sums).
    cfg = bytearray(64)
    cfg[0] = 1
    for t, (rows, colsb) in enumerate([(T, 32), (T, 32), (8, 64), (8, 64), (T, 64), (T, 64)]):
        cfg[16 + 2 * t:18 + 2 * t] = colsb.to_bytes(2, 'little')
        cfg[48 + t] = rows
    out = []
    for i in range(8):
        out.append('DATA amxConfig%d<>+%d(SB)/8, $0x%016x' % (T, 8 * i, int.from_bytes(cfg[8 * i:8 * i + 8], 'little')))
    out.append('GLOBL amxConfig%d<>(SB), RODATA|NOPTR, $64' % T)
    return out


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else '.'
    out = ['// Code generated by gen_tile_amx.py; DO NOT EDIT.', '', '//go:build !purego', '',
           '#include "textflag.h"', '',
           '// The AMX-INT8 kernels over packed Q8_0 and Q4_0 weights (gen_tile_amx.py',
           '// says how), one per token count 2..10, with the packed VNNI kernels\'',
           '// signature and results.', '',
           'DATA amxNibbleMask<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f',
           'GLOBL amxNibbleMask<>(SB), RODATA|NOPTR, $8', '']
    for T in range(2, 11):
        out += config(T)
    for kind in ('q8_0', 'q4_0'):
        for T in range(2, 11):
            out += kernel(kind, T)
    with open(os.path.join(d, 'tile_amx_amd64.s'), 'w') as f:
        f.write('\n'.join(out) + '\n')


main()
