//go:build !purego

package kernels

import "golang.org/x/sys/cpu"

// The Q4_0 packed kernels of tile_packed_q4_0_gfni_amd64.s (written by
// gen_tile_packed.py): those of tile_packed_q4_0_amd64.s with each chunk's
// high nibbles taken out by one VGF2P8AFFINEQB instead of VPSRLW and
// VPANDD. The kernels are bound by the two ports that run 512-bit
// operations, so the four operations a block fewer are their gain; the
// bytes they feed VPDPBUSD are the same, so the results are the same bits
// (TestPackedQ4_0GFNIMatchesShift).

// packedGFNI reports whether the AVX-512 Q4_0 products take the GFNI
// kernels: where the VNNI family runs on an Intel CPU with GFNI (every
// AVX-512 VNNI one but Cascade Lake). There every 512-bit operation runs on
// the same two ports, so an operation fewer is a cycle's half fewer. AMD's
// Zen 4 and Zen 5 have GFNI too, but run VGF2P8AFFINEQB on the multiply
// pipes that VPDPBUSD and the float steps already fill, and the shift and
// the mask on others, so there the trade may go the other way; they keep
// the shift-and-mask kernels until it is measured on one. Tests switch it
// to compare the two sets.
var packedGFNI = hasVNNI && cpu.X86.HasAVX512GFNI && amdFamily() == 0

//go:noescape
func q4_0PackedGFNI1(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0PackedGFNI2(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0PackedGFNI3(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0PackedGFNI4(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0PackedGFNI5(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0PackedGFNI6(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0PackedGFNI7(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0PackedGFNI8(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0PackedGFNI9(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0PackedGFNI10(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

var q4_0PackedGFNIKernels = packedSet{nil, q4_0PackedGFNI1, q4_0PackedGFNI2, q4_0PackedGFNI3, q4_0PackedGFNI4, q4_0PackedGFNI5, q4_0PackedGFNI6, q4_0PackedGFNI7, q4_0PackedGFNI8, q4_0PackedGFNI9, q4_0PackedGFNI10}
