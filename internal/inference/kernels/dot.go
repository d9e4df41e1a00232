package kernels

import (
	"encoding/binary"
	"unsafe"

	"partnerapi/internal/inference/gguf"
)

// rowDot computes the dot product of one weight row (raw ggml bytes) with a
// prepared activation. These are the inner loops that Go assembly replaces.
type rowDot func(row []byte, a *activation) float32

// The dispatch points: the portable Go kernels, replaced at init by
// assembly where the CPU supports it (dot_amd64.go). Variables rather than a
// switch on a feature flag so the hot path pays one indirect call, which
// MatMul pays anyway through rowDot.
var (
	dotF32    rowDot = dotF32Go
	dotF16    rowDot = dotF16Go
	dotQ8_0   rowDot = dotQ8_0Go
	dotQ4_0   rowDot = dotQ4_0Go
	dotQ4K    rowDot = dotQ4KGo
	dotQ6K    rowDot = dotQ6KGo
	dotF32Vec        = dotF32VecGo
	sumF32           = sumF32Go
	axpyF32          = axpyF32Go
	// Four-token row dots for batched products (nil: use rowDot per
	// token). Each must equal four calls of its type's rowDot bit for bit,
	// so that a token's result does not depend on its batch.
	// Q8_0 and Q4_0 have register-tiled kernels instead (tiles.go).
	dot4Q4K, dot4Q6K, dot4F16, dot4F32 rowDot4
	// Two-row, four-token dots (nil: use the type's rowDot4 a row at a
	// time), each value equal to its type's rowDot bit for bit.
	dot2x4F16 rowDot2x4
)

// rowDot2x4 computes two weight rows against four activations at once:
// each activation chunk is loaded once for both rows, where a rowDot4 loads
// it for every row. Token t's value of row i is out[4*i+t].
type rowDot2x4 func(row0, row1 []byte, a []activation) [8]float32

func rowDot2x4For(t gguf.GGMLType) rowDot2x4 {
	if t == gguf.F16 {
		return dot2x4F16
	}
	return nil
}

// rowDot4 computes one weight row against four activations at once, so a
// batched product expands each weight block once per four tokens. The
// results come back by value: a pointer handed to a function variable
// escapes, and the caller's array was allocated on every product.
type rowDot4 func(row []byte, a []activation) [4]float32

func rowDot4For(t gguf.GGMLType) rowDot4 {
	switch t {
	case gguf.Q4_K:
		return dot4Q4K
	case gguf.Q6_K:
		return dot4Q6K
	case gguf.F16:
		return dot4F16
	case gguf.F32:
		return dot4F32
	}
	return nil
}

// AxpyF32 adds a·x to dst (len(x) values): the value accumulation of
// attention, which otherwise runs as scalar Go in the decode hot path.
func AxpyF32(dst []float32, a float32, x []float32) { axpyF32(dst[:len(x)], a, x) }

func axpyF32Go(dst []float32, a float32, x []float32) {
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] += a * v
	}
}

// SumF32 is the sum of x. Besides being a kernel it is the probe the engine
// benchmark uses to measure memory read bandwidth with the same code path.
func SumF32(x []float32) float32 { return sumF32(x) }

func sumF32Go(x []float32) float32 {
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += x[i]
		s1 += x[i+1]
		s2 += x[i+2]
		s3 += x[i+3]
	}
	for ; i < len(x); i++ {
		s0 += x[i]
	}
	return s0 + s1 + s2 + s3
}

func rowDotFor(t gguf.GGMLType) rowDot {
	switch t {
	case gguf.F32:
		return dotF32
	case gguf.F16:
		return dotF16
	case gguf.BF16:
		return dotBF16
	case gguf.Q8_0:
		return dotQ8_0
	case gguf.Q4_0:
		return dotQ4_0
	case gguf.Q5_0:
		return dotQ5_0Go
	case gguf.Q5_1:
		return dotQ5_1Go
	case gguf.IQ4_NL:
		return dotIQ4NLGo
	case gguf.Q4_K:
		return dotQ4K
	case gguf.Q5_K:
		return dotQ5KGo
	case gguf.Q2_K:
		return dotQ2KGo
	case gguf.Q3_K:
		return dotQ3KGo
	case gguf.Q6_K:
		return dotQ6K
	}
	return nil
}

// float32s views little-endian float bytes in place (the supported hosts are
// little-endian, and tensor data is 32-byte aligned in GGUF files).
func float32s(b []byte) []float32 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4)
}

func uint16s(b []byte) []uint16 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*uint16)(unsafe.Pointer(&b[0])), len(b)/2)
}

// DotF32 is the dot product of two float vectors of equal length.
func DotF32(a, b []float32) float32 { return dotF32Vec(a, b[:len(a)]) }

// dotF32VecGo is the portable DotF32; b has a's length.
func dotF32VecGo(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

func dotF32Go(row []byte, a *activation) float32 { return dotF32VecGo(float32s(row), a.f) }

func dotF16Go(row []byte, a *activation) float32 {
	w := uint16s(row)
	x := a.f[:len(w)]
	t := f16Table
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(w); i += 4 {
		s0 += t[w[i]] * x[i]
		s1 += t[w[i+1]] * x[i+1]
		s2 += t[w[i+2]] * x[i+2]
		s3 += t[w[i+3]] * x[i+3]
	}
	for ; i < len(w); i++ {
		s0 += t[w[i]] * x[i]
	}
	return s0 + s1 + s2 + s3
}

func dotBF16(row []byte, a *activation) float32 {
	w := uint16s(row)
	x := a.f[:len(w)]
	var s float32
	for i, h := range w {
		s += BF16ToFloat(h) * x[i]
	}
	return s
}

func dotQ8_0Go(row []byte, a *activation) float32 {
	nb := len(row) / BlockQ8_0
	qs := a.qs[:nb*QK8_0]
	ds := a.d[:nb]
	var sum float32
	for b := 0; b < nb; b++ {
		blk := row[b*BlockQ8_0 : (b+1)*BlockQ8_0]
		// Fixed-size array views let the compiler drop the bounds checks.
		qw := (*[32]int8)(unsafe.Pointer(&blk[2]))
		qx := (*[32]int8)(qs[b*QK8_0:])
		var s0, s1, s2, s3 int32
		for j := 0; j < 32; j += 4 {
			s0 += int32(qw[j]) * int32(qx[j])
			s1 += int32(qw[j+1]) * int32(qx[j+1])
			s2 += int32(qw[j+2]) * int32(qx[j+2])
			s3 += int32(qw[j+3]) * int32(qx[j+3])
		}
		sum += f16Table[binary.LittleEndian.Uint16(blk)] * ds[b] * float32(s0+s1+s2+s3)
	}
	return sum
}

func dotQ4_0Go(row []byte, a *activation) float32 {
	nb := len(row) / BlockQ4_0
	var sum float32
	for b := 0; b < nb; b++ {
		blk := row[b*BlockQ4_0 : (b+1)*BlockQ4_0]
		qx := a.qs[b*QK4_0 : (b+1)*QK4_0]
		qw := blk[2:18]
		var isum int32
		for j := 0; j < 16; j++ {
			isum += (int32(qw[j]&0x0f)-8)*int32(qx[j]) + (int32(qw[j]>>4)-8)*int32(qx[j+16])
		}
		sum += f16Table[binary.LittleEndian.Uint16(blk)] * a.d[b] * float32(isum)
	}
	return sum
}

func dotQ4KGo(row []byte, a *activation) float32 {
	nb := len(row) / BlockQ4_K
	var sum float32
	for b := 0; b < nb; b++ {
		blk := row[b*BlockQ4_K : (b+1)*BlockQ4_K]
		d := f16Table[binary.LittleEndian.Uint16(blk)] * a.d[b]
		dmin := f16Table[binary.LittleEndian.Uint16(blk[2:])] * a.d[b]
		scales := blk[4:16]
		qs := blk[16:144]
		qx := a.qs[b*QK_K : (b+1)*QK_K]
		sums := a.sums[b*16 : b*16+16]
		var isum, msum int32
		for c := 0; c < 4; c++ {
			sc1, m1 := q4KScaleMin(scales, 2*c)
			sc2, m2 := q4KScaleMin(scales, 2*c+1)
			q := qs[32*c : 32*c+32]
			x1 := qx[64*c : 64*c+32]
			x2 := qx[64*c+32 : 64*c+64]
			var s1, s2 int32
			for l := 0; l < 32; l++ {
				s1 += int32(q[l]&0x0f) * int32(x1[l])
				s2 += int32(q[l]>>4) * int32(x2[l])
			}
			isum += int32(sc1)*s1 + int32(sc2)*s2
			msum += int32(m1)*(sums[4*c]+sums[4*c+1]) + int32(m2)*(sums[4*c+2]+sums[4*c+3])
		}
		// The conversions keep each product rounded on its own (no fused
		// multiply-add), the steps the packed Q4_K kernels take.
		sum += float32(d*float32(isum)) - float32(dmin*float32(msum))
	}
	return sum
}

func dotQ6KGo(row []byte, a *activation) float32 {
	nb := len(row) / BlockQ6_K
	var sum float32
	for b := 0; b < nb; b++ {
		blk := row[b*BlockQ6_K : (b+1)*BlockQ6_K]
		d := f16Table[binary.LittleEndian.Uint16(blk[208:])] * a.d[b]
		qx := a.qs[b*QK_K : (b+1)*QK_K]
		var isum int32
		for n := 0; n < 2; n++ {
			ql := blk[64*n : 64*n+64]
			qh := blk[128+32*n : 128+32*n+32]
			sc := blk[192+8*n : 192+8*n+8]
			x := qx[128*n : 128*n+128]
			for is := 0; is < 2; is++ {
				var s1, s2, s3, s4 int32
				for l := 16 * is; l < 16*is+16; l++ {
					s1 += (int32(ql[l]&0xf|(qh[l]&3)<<4) - 32) * int32(x[l])
					s2 += (int32(ql[l+32]&0xf|(qh[l]>>2&3)<<4) - 32) * int32(x[l+32])
					s3 += (int32(ql[l]>>4|(qh[l]>>4&3)<<4) - 32) * int32(x[l+64])
					s4 += (int32(ql[l+32]>>4|(qh[l]>>6&3)<<4) - 32) * int32(x[l+96])
				}
				isum += int32(int8(sc[is]))*s1 + int32(int8(sc[is+2]))*s2 + int32(int8(sc[is+4]))*s3 + int32(int8(sc[is+6]))*s4
			}
		}
		sum += float32(d * float32(isum)) // not fused: the packed kernels' steps
	}
	return sum
}

// Float32View views little-endian F32 tensor bytes as floats without copying.
func Float32View(b []byte) []float32 { return float32s(b) }

// AsmEnabled reports whether the assembly kernels replaced the Go ones on
// this CPU and build.
func AsmEnabled() bool { return hasAVX2 }
