//go:build !purego

package kernels

import (
	"encoding/binary"
	"unsafe"
)

func init() {
	if !hasAVX2 {
		return
	}
	dotF32 = dotF32Asm
	dotF16 = dotF16Asm
	dot4F16 = dotF16x4Asm
	if hasVNNI {
		// The AVX-512 family: the F16 two-row tile and the F32
		// four-token dot need AVX-512VL's registers Y16–Y31.
		dot2x4F16 = dotF16x2x4Asm
		dot4F32 = dotF32x4Asm
	}
	dotQ8_0 = dotQ8_0Asm
	dotQ4_0 = dotQ4_0Asm
	dotQ4K = dotQ4KAsm
	dotQ6K = dotQ6KAsm
	dotF32Vec = dotF32VecAsm
	sumF32 = sumF32Asm
	axpyF32 = axpyF32Asm
}

//go:noescape
func axpyF32AVX2(dst *float32, a float32, x *float32, n int)

func axpyF32Asm(dst []float32, a float32, x []float32) {
	if len(x) == 0 {
		return
	}
	dst = dst[:len(x)]
	axpyF32AVX2(&dst[0], a, &x[0], len(x))
}

// The assembly routines take raw pointers and counts; the Go wrappers below
// own the bounds checks so the assembly never reads past a slice.

//go:noescape
func dotF32AVX2(a, b *float32, n int) float32

//go:noescape
func sumF32AVX2(x *float32, n int) float32

//go:noescape
func dotF16AVX2(w *uint16, x *float32, n int) float32

//go:noescape
func dotQ8_0AVX2(w *byte, x *int8, d *float32, nb int) float32

//go:noescape
func dotQ4_0AVX2(w *byte, x *int8, d *float32, nb int) float32

// q4KBlockAVX2 returns Σ_j sc[j] · Σ_l q_j[l]·x_j[l] over the eight 32-value
// sub-blocks of one Q4_K block (qs: 128 nibble bytes, x: 256 int8).
//
//go:noescape
func q4KBlockAVX2(qs *byte, x *int8, sc *[8]int16) int32

// q6KBlockAVX2 returns Σ_g sc[g] · Σ_l q_g[l]·x_g[l] over the sixteen 16-value
// groups of one Q6_K block with q in 0..63 (the −32 offset is folded in by
// the caller through the Q8_K group sums).
//
//go:noescape
func q6KBlockAVX2(blk *byte, x *int8) int32

func dotF32VecAsm(a, b []float32) float32 {
	if len(a) == 0 {
		return 0
	}
	b = b[:len(a)]
	return dotF32AVX2(&a[0], &b[0], len(a))
}

func sumF32Asm(x []float32) float32 {
	if len(x) == 0 {
		return 0
	}
	return sumF32AVX2(&x[0], len(x))
}

func dotF32Asm(row []byte, a *activation) float32 { return dotF32VecAsm(float32s(row), a.f) }

func dotF16Asm(row []byte, a *activation) float32 {
	w := uint16s(row)
	if len(w) == 0 {
		return 0
	}
	x := a.f[:len(w)]
	return dotF16AVX2(&w[0], &x[0], len(w))
}

func dotQ8_0Asm(row []byte, a *activation) float32 {
	nb := len(row) / BlockQ8_0
	if nb == 0 {
		return 0
	}
	_ = a.qs[nb*QK8_0-1]
	_ = a.d[nb-1]
	return dotQ8_0AVX2(&row[0], &a.qs[0], &a.d[0], nb)
}

func dotQ4_0Asm(row []byte, a *activation) float32 {
	nb := len(row) / BlockQ4_0
	if nb == 0 {
		return 0
	}
	_ = a.qs[nb*QK4_0-1]
	_ = a.d[nb-1]
	return dotQ4_0AVX2(&row[0], &a.qs[0], &a.d[0], nb)
}

func dotQ4KAsm(row []byte, a *activation) float32 {
	nb := len(row) / BlockQ4_K
	_ = a.qs[:nb*QK_K]
	_ = a.sums[:nb*16]
	var sum float32
	var sc [8]int16
	for b := 0; b < nb; b++ {
		blk := row[b*BlockQ4_K : (b+1)*BlockQ4_K]
		sums := a.sums[b*16 : b*16+16]
		var msum int32
		for j := 0; j < 8; j++ {
			s, m := q4KScaleMin(blk[4:16], j)
			sc[j] = int16(s)
			msum += int32(m) * (sums[2*j] + sums[2*j+1])
		}
		isum := q4KBlock(&blk[16], &a.qs[b*QK_K], &sc)
		sum = q4KAccumulate(sum, f16Table[binary.LittleEndian.Uint16(blk)], f16Table[binary.LittleEndian.Uint16(blk[2:])], a.d[b], isum, msum)
	}
	return sum
}

func dotQ6KAsm(row []byte, a *activation) float32 {
	nb := len(row) / BlockQ6_K
	_ = a.qs[:nb*QK_K]
	_ = a.sums[:nb*16]
	var sum float32
	for b := 0; b < nb; b++ {
		blk := row[b*BlockQ6_K : (b+1)*BlockQ6_K]
		sc := (*[16]int8)(unsafe.Pointer(&blk[192]))
		sums := a.sums[b*16 : b*16+16]
		// Group g of the sums (16 values each, in x order) meets scale g.
		var off int32
		for g := 0; g < 16; g++ {
			off += int32(sc[g]) * sums[g]
		}
		isum := q6KBlock(&blk[0], &a.qs[b*QK_K]) - 32*off
		sum = q6KAccumulate(sum, f16Table[binary.LittleEndian.Uint16(blk[208:])], a.d[b], isum)
	}
	return sum
}

// q4KAccumulate adds one Q4_K block's contribution (weight scales dw and
// dmw, activation scale dx, integer sums isum and msum) to sum. The one- and
// four-token kernels share it, and the explicit conversions forbid the
// compiler to fuse the operations differently in either, so both round
// identically.
func q4KAccumulate(sum, dw, dmw, dx float32, isum, msum int32) float32 {
	d, dmin := float32(dw*dx), float32(dmw*dx)
	return sum + (float32(d*float32(isum)) - float32(dmin*float32(msum)))
}

// q6KAccumulate is q4KAccumulate for Q6_K.
func q6KAccumulate(sum, dw, dx float32, isum int32) float32 {
	return sum + float32(float32(dw*dx)*float32(isum))
}

//go:noescape
func dotF16x4AVX2(w *uint16, x *[4]*float32, n int, out *[4]float32)

// dotF16x4Asm is dotF16Asm for four tokens: each 8-value weight chunk is
// converted once. It follows dotF16AVX2's steps per token exactly, so the
// results are equal bit for bit.
func dotF16x4Asm(row []byte, a []activation) (out [4]float32) {
	w := uint16s(row)
	if len(w) == 0 {
		return out
	}
	xs := floatTokens(a, len(w))
	dotF16x4AVX2(&w[0], &xs, len(w), &out)
	return out
}

//go:noescape
func dotF16x2x4AVX512(w0, w1 *uint16, x *[4]*float32, n int, out *[8]float32)

// dotF16x2x4Asm is dotF16x4Asm for two rows of equal length: each
// activation chunk is loaded once for both. Every value follows
// dotF16AVX2's steps exactly, as dotF16x4Asm's do.
func dotF16x2x4Asm(row0, row1 []byte, a []activation) (out [8]float32) {
	w0, w1 := uint16s(row0), uint16s(row1)
	if len(w0) == 0 {
		return out
	}
	w1 = w1[:len(w0)]
	xs := floatTokens(a, len(w0))
	dotF16x2x4AVX512(&w0[0], &w1[0], &xs, len(w0), &out)
	return out
}

//go:noescape
func dotF32x4AVX512(w *float32, x *[4]*float32, n int, out *[4]float32)

// dotF32x4Asm is dotF32Asm for four tokens: each weight chunk is loaded
// once for the four, and every token follows dotF32AVX2's steps exactly.
func dotF32x4Asm(row []byte, a []activation) (out [4]float32) {
	w := float32s(row)
	if len(w) == 0 {
		return out
	}
	xs := floatTokens(a, len(w))
	dotF32x4AVX512(&w[0], &xs, len(w), &out)
	return out
}

// floatTokens is the first value of each of four float activations, each
// checked to hold n values: what the multi-token float kernels read.
func floatTokens(a []activation, n int) (xs [4]*float32) {
	for t := range xs {
		xs[t] = &a[t].f[:n][0]
	}
	return xs
}
