package kernels

import (
	"encoding/binary"
	"fmt"

	"partnerapi/internal/inference/gguf"
)

// Repacked Q8_0 and Q4_0 weights (the AVX-512 and AVX2 families). The
// one-row tiles spend most of their instructions on per-block overhead:
// converting the integer sums, multiplying scales and summing lanes
// horizontally. Pack rearranges a matrix once, at model load, into groups
// of packGroup rows interleaved so that lanes are rows (16 rows of zmm
// int32 lanes for AVX-512, 8 of ymm ones for AVX2): for group g and
// K-block b, at packed[(g·nb+b)·packBlockBytes(t):],
//
//   - the group's f16 scales (2·packGroup bytes, one VCVTPH2PS),
//   - Q8_0: 8 chunks of 4·packGroup bytes, chunk j holding bytes [4j, 4j+4)
//     of the block of each row i at 4i; for AVX-512 stored as w XOR 0x80
//     (the unsigned w+128, packFlip): VPDPBUSD's unsigned operand must be a
//     register and only its signed operand can be a broadcast memory
//     operand, which is how each token's four activation bytes come in at
//     no extra instruction; for AVX2 as they are (signed), for the sign
//     trick of VPMADDUBSW;
//   - Q4_0: 4 chunks of 4·packGroup bytes, chunk j holding bytes [4j, 4j+4)
//     of each row's 16 quant bytes; the low nibbles are elements 4j..4j+3,
//     the high ones 16+4j..16+4j+3, both the unsigned 0..15.
//
// Both keep the GGUF size (34 or 18 bytes per row and block), so a token
// reads as many weight bytes as before. The biases come back out through a
// per (token, block) correction, −128·Σx (AVX-512 Q8_0) or −8·Σx (Q4_0),
// that prepare computes once per activation (q8Tiles.c8, c4), and which
// starts or joins the token's integer sum. A token's result is then
// Σ_b d_w·(d_x·float(Σ_i w_i·x_i)) per row, exact in the integer part: the
// same arithmetic for one token as for ten, so batches stay invariant, but
// not the one-row tiles' bits (they sum eight lanes per row in floats), so
// the packed kernels agree with the others only to rounding.
//
// Rows past the last whole group keep the one-row tiles (over the same,
// unbiased activations, and with the same bits for one token as for ten).
// The worker pool splits packed products on group boundaries (rowUnit), so
// a row is computed by the same kernel family whatever the batch.

// packGroup is the rows of a packed group of the kernel family in use, and
// packFlip what its Q8_0 words are XORed with (both set once at start-up
// with tilePacked; tests switch them between calls).
var (
	packGroup int
	packFlip  uint32
)

// packBlockBytes is the size of one (group, block) of type t with groups
// of `group` rows.
func packBlockBytes(t gguf.GGMLType, group int) int {
	switch t {
	case gguf.Q8_0:
		return group * BlockQ8_0
	case gguf.Q4_K:
		return q4KPackBytes(group) // a superblock of 256 values
	case gguf.Q5_K:
		return 180 * group
	case gguf.Q6_K:
		return q6KPackBytes(group)
	case gguf.Q3_K:
		return q3KPackBytes(group)
	case gguf.Q2_K:
		return q2KPackBytes(group)
	case gguf.IQ4_NL:
		return group * BlockIQ4_NL
	case gguf.Q5_0:
		return group * BlockQ5_0
	case gguf.Q5_1:
		return group * BlockQ5_1
	}
	return group * BlockQ4_0
}

// tilePacked reports whether the Q8_0 and Q4_0 products use packed weights
// where a matrix has them (set once at start-up; tests switch it between
// calls), packedMulRows computes rows [lo, hi) of such a product.
var (
	tilePacked    bool
	packedMulRows func(dst []float32, w Matrix, p *q8Tiles, lo, hi int)
)

// Pack returns m with its weights also repacked for the packed kernels
// where the kernel family in use has them and m is a Q8_0 or Q4_0 matrix
// (or Q4_K or Q6_K, with the AVX-512 family: packed_q4k.go, packed_q6k.go)
// of at least one whole
// group of rows; otherwise it returns m unchanged.
// The copy lives on the heap next to m.Data, which stays (embedding
// lookups and the rows past the last whole group read it). Call it once
// per matrix, at load.
func Pack(m Matrix) Matrix { return PackInto(m, make([]byte, PackedSize(m))) }

// PackedSize is the bytes Pack's copy of m takes (0 where Pack leaves m
// unchanged).
func PackedSize(m Matrix) int {
	packs := m.Type == gguf.Q8_0 || m.Type == gguf.Q4_0 || (m.Type == gguf.Q4_K || m.Type == gguf.Q5_K || m.Type == gguf.Q6_K) && packsKQuant(m.Type) ||
		(m.Type == gguf.Q5_0 || m.Type == gguf.Q5_1) && packsQ5Matrix(m) || m.Type == gguf.Q3_K && packsQ3K() || m.Type == gguf.Q2_K && packsQ2K() ||
		m.Type == gguf.IQ4_NL && packsIQ4NLMatrix(m)
	group := packGroupFor(m.Type)
	if !tilePacked || !packs || m.Rows < group || m.packed != nil {
		return 0
	}
	if m.Validate() != nil {
		return 0
	}
	return m.Rows / group * (m.Cols / m.Type.BlockSize()) * packBlockBytes(m.Type, group)
}

// PackInto is Pack with the copy written to buf, PackedSize(m) bytes that
// the caller allocated (the model loader carves every matrix's copy out of
// one buffer in huge pages). buf must be zeroed or otherwise unused.
func PackInto(m Matrix, buf []byte) Matrix {
	size := PackedSize(m)
	if size == 0 {
		return m
	}
	if len(buf) != size {
		panic(fmt.Sprintf("kernels: PackInto buffer of %d bytes for a packed copy of %d", len(buf), size))
	}
	group := packGroupFor(m.Type)
	groups, nb, gb := m.Rows/group, m.Cols/m.Type.BlockSize(), packBlockBytes(m.Type, group)
	m.packed = buf
	m.packedGroup = group
	parallelFor(groups, groups*group*m.Cols, func(lo, hi int) {
		for g := lo; g < hi; g++ {
			packGroupRows(m.packed[g*nb*gb:(g+1)*nb*gb], m, g, group, packFlip)
		}
	})
	return m
}

// Packed reports whether m carries packed weights (Pack).
func (m Matrix) Packed() bool { return m.packed != nil }

// StreamedBytes is the bytes a product over m reads: its packed copy's
// where it has one (whose layout can be larger than GGUF's: Q3_K's is 146
// bytes a row and superblock against 110), else its own.
func (m Matrix) StreamedBytes() int {
	if m.packed != nil {
		return len(m.packed)
	}
	return len(m.Data)
}

// packGroupRows writes group g of m, in groups of `group` rows with the
// Q8_0 words XORed with flip, in the packed layout to dst.
func packGroupRows(dst []byte, m Matrix, g, group int, flip uint32) {
	switch m.Type {
	case gguf.Q4_K, gguf.Q5_K:
		packQ4KGroup(dst, m, g, group)
		return
	case gguf.Q6_K:
		packQ6KGroup(dst, m, g, group)
		return
	case gguf.Q3_K:
		packQ3KGroup(dst, m, g, group)
		return
	case gguf.Q2_K:
		packQ2KGroup(dst, m, g, group)
		return
	case gguf.Q5_0, gguf.Q5_1:
		packQ5Group(dst, m, g, group)
		return
	}
	rb, nb, gb := m.RowBytes(), m.Cols/QK8_0, packBlockBytes(m.Type, group)
	bs, chunks := BlockQ4_0, 4
	if m.Type == gguf.Q8_0 {
		bs, chunks = BlockQ8_0, 8
	} else {
		flip = 0
	}
	for b := range nb {
		o := dst[b*gb : (b+1)*gb]
		for i := range group {
			blk := m.Data[(g*group+i)*rb+b*bs:]
			o[2*i], o[2*i+1] = blk[0], blk[1]
			for j := range chunks {
				v := binary.LittleEndian.Uint32(blk[2+4*j:]) ^ flip
				binary.LittleEndian.PutUint32(o[2*group+4*group*j+4*i:], v)
			}
		}
	}
}

// blockSumsRange is blockSums for chunks [lo, hi) of the buffer, its
// slices already grown, from the sums the quantiser left.
func (p *q8Tiles) blockSumsRange(lo, hi int) {
	sums := p.sums[lo:hi]
	for j, sum := range sums {
		i := lo + j
		p.c8[i] = -128 * sum
		p.c4[i] = -8 * sum
		p.c16[i] = -16 * sum
		p.ms[i] = p.d[i] * float32(sum)
	}
}
