# gen_tile_vnni.py writes tile_vnni_q8_0_amd64.s and tile_vnni_q4_0_amd64.s,
# the AVX-512 VNNI one-row tiles for 2..10 tokens, from the macros in
# tile_vnni_amd64.h: the kernels differ only in their token count and register
# assignment, which is easier to get right generated than typed 18 times.
# Run it through `go generate ./internal/inference/kernels`.
import sys
def geny(typ, Ts):
    pre = "q8_0" if typ == "q8" else "q4_0"
    lab = "v80" if typ == "q8" else "v40"
    wstep = 34 if typ == "q8" else 18
    out = ["//go:build !purego", "", '#include "textflag.h"', '#include "tile_amd64.h"', '#include "tile_vnni_amd64.h"', "",
           "// The one-row %s kernels for AVX-512 VNNI; tile_vnni_amd64.h describes\n// them, one kernel per token count as in tile_%s_amd64.s." % ("Q8_0" if typ == "q8" else "Q4_0", pre), ""]
    for T in Ts:
        name = "%sTile1x%dVNNI" % (pre, T)
        frame = 0 if T == 1 else 64
        out.append("// func %s(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)" % name)
        out.append("TEXT ·%s(SB), NOSPLIT, $%d-72" % (name, frame))
        out.append("\tVTILEARGS")
        out.append("")
        out.append("%st%drow:" % (lab, T))
        for k in range(T):
            out.append("\tVXORPS Y%d, Y%d, Y%d" % (k, k, k))
        out.append("\tTILESTART")
        out.append("\tTESTQ CX, CX")
        out.append("\tJEQ   %st%ddone" % (lab, T))
        out.append("")
        out.append("%st%dloop:" % (lab, T))
        if T == 1:
            out.append("\tTILESCALE1((SI), 0)")
        else:
            out.append("\tTILESCALEW((SI))")
            out.append("\tTILESCALE8(0, 0)")
            if T > 8:
                out.append("\tTILESCALE8(32, 32)")
        out.append("\tVQ8W" if typ == "q8" else "\tVQ4W")
        if T == 1:
            out.append("\tVPROD(0)")
            out.append("\tVFMADD231PS Y13, Y14, Y0")
        else:
            for k in range(T):
                out.append("\tVTOK(%d, %d, Y%d)" % (32 * k, 4 * k, k))
        out.append("\tTILENEXT(%d, %d, %d)" % (wstep, 32 * T, 4 * T))
        out.append("\tJNZ   %st%dloop" % (lab, T))
        out.append("")
        out.append("%st%ddone:" % (lab, T))
        out.append("\tMOVQ DI, AX")
        for k in range(T):
            out.append("\tTILEOUT(Y%d, X%d)" % (k, k))
        out.append("\tADDQ $4, DI // SI is already at the next row")
        out.append("\tDECQ R14")
        out.append("\tJNZ  %st%drow" % (lab, T))
        out.append("\tVZEROUPPER")
        out.append("\tRET")
        out.append("")
    return "\n".join(out)
def data():
    o=["// The VPERMPS indices into a block's sixteen scales: tilePairIdx for the", "// pair of tokens 2p and 2p+1 at 64p, tileOneIdx for an odd last token", "// 2, 4, 6 or 8."]
    for p in range(5):
        for half in range(2):
            k=2*p+half
            for j in range(4):
                o.append("DATA tilePairIdx<>+%d(SB)/8, $0x%08x%08x" % (64*p+32*half+8*j, k, k))
    o.append("GLOBL tilePairIdx<>(SB), RODATA|NOPTR, $320")
    for i,k in enumerate([2,4,6,8]):
        for j in range(8):
            o.append("DATA tileOneIdx<>+%d(SB)/8, $0x%08x%08x" % (64*i+8*j, k, k))
    o.append("GLOBL tileOneIdx<>(SB), RODATA|NOPTR, $256")
    return "\n".join(o)

def genz(typ, Ts):
    pre = "q8_0" if typ == "q8" else "q4_0"
    lab = "z80" if typ == "q8" else "z40"
    wstep = 34 if typ == "q8" else 18
    out = ["//go:build !purego", "", '#include "textflag.h"', '#include "tile_amd64.h"', '#include "tile_vnni_amd64.h"', "",
           "// The one-row %s kernels for AVX-512 VNNI, 2–10 tokens; tile_vnni_amd64.h\n// describes them, one kernel per token count." % ("Q8_0" if typ == "q8" else "Q4_0"), "", data(), ""]
    for T in Ts:
        P = T // 2
        odd = T % 2
        name = "%sTile1x%dVNNI" % (pre, T)
        out.append("// func %s(w *byte, stride int, x *int8, d *float32, c *int16, nb int, out *float32, ostride int, steps int)" % name)
        out.append("TEXT ·%s(SB), NOSPLIT, $0-72" % name)
        out.append("\tZTILEARGS")
        if typ == "q4":
            out.append("\tZQ4ARGS")
        for p in range(P):
            out.append("\tVMOVDQU32 tilePairIdx<>+%d(SB), Z%d" % (64 * p, 17 + p))
        if odd:
            out.append("\tVMOVDQU32 tileOneIdx<>+%d(SB), Z22" % (64 * (P - 1)))
        out.append("")
        out.append("%st%drow:" % (lab, T))
        for p in range(P + odd):
            out.append("\tVPXORD Z%d, Z%d, Z%d" % (p, p, p))
        out.append("\tTILESTART")
        out.append("\tTESTQ CX, CX")
        out.append("\tJEQ   %st%ddone" % (lab, T))
        out.append("")
        out.append("%st%dloop:" % (lab, T))
        out.append("\tZSCALES")
        out.append("\tZQ8W" if typ == "q8" else "\tZQ4W")
        for p in range(P):
            out.append("\tZPAIR(%d, Z%d, Z%d)" % (64 * p, 17 + p, p))
        if odd:
            out.append("\tZONE(%d, Y%d)" % (64 * P, P))
        out.append("\tTILENEXT(%d, %d, %d)" % (wstep, 32 * T, 4 * T))
        out.append("\tJNZ   %st%dloop" % (lab, T))
        out.append("")
        out.append("%st%ddone:" % (lab, T))
        out.append("\tMOVQ DI, AX")
        for p in range(P):
            out.append("\tZPAIROUT(Z%d, Y%d, X%d)" % (p, p, p))
        if odd:
            out.append("\tTILEOUT(Y%d, X%d)" % (P, P))
        out.append("\tADDQ $4, DI // SI is already at the next row")
        out.append("\tDECQ R14")
        out.append("\tJNZ  %st%drow" % (lab, T))
        out.append("\tVZEROUPPER")
        out.append("\tRET")
        out.append("")
    return "\n".join(out)

d = sys.argv[1]
for typ, pre, T in [("q8", "q8_0", "Q8_0"), ("q4", "q4_0", "Q4_0")]:
    y = geny(typ, [2, 3]).split("\n")
    zz = genz(typ, range(4, 11)).split("\n")
    # header from the ymm part, then the zmm tables and kernels
    hdr = ["// Code generated by gen_tile_vnni.py; DO NOT EDIT.", "", "//go:build !purego", "", '#include "textflag.h"', '#include "tile_amd64.h"', '#include "tile_vnni_amd64.h"', "",
           "// The one-row %s kernels for AVX-512 VNNI; tile_vnni_amd64.h describes" % T,
           "// them. Two and three tokens take a ymm register per token, four to ten",
           "// take the tokens in pairs on zmm registers, each where it measured",
           "// faster (BenchmarkTileKernel). One token has no VNNI kernel: the AVX2", "// one measured faster (q8Tiles.prepare).", ""]
    ybody = y[9:]
    zbody = zz[9:]
    open(d + "/tile_vnni_%s_amd64.s" % pre, "w").write("\n".join(hdr + ybody + zbody))
