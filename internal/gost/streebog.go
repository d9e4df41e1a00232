package gost

import (
	"encoding/binary"
	"hash"
)

// Streebog (GOST R 34.11-2012, RFC 6986) works on 512-bit blocks. The state is
// kept as eight little-endian 64-bit words: word i holds bytes 8i..8i+7 of the
// byte string that the RFC writes most significant byte first. With that
// layout, the first 64 message bytes form the first block processed, which is
// the convention of the OpenSSL engine and gost12sum.

const streebogBlockSize = 64

// streebogLPS[j][v] is the combined S (substitution π), P (byte transposition τ)
// and L (multiplication by matrix A) transformation for byte value v sitting
// in byte j of an input word. Because L is linear over GF(2), each output word
// is the XOR of eight table entries.
var streebogLPS [8][256]uint64

func init() {
	for j := 0; j < 8; j++ {
		for v := 0; v < 256; v++ {
			streebogLPS[j][v] = streebogL(uint64(streebogPi[v]) << (8 * j))
		}
	}
}

// streebogL multiplies one 64-bit word by the matrix A; the word's most
// significant bit selects row 0.
func streebogL(w uint64) uint64 {
	var r uint64
	for k := 0; k < 64; k++ {
		if w&(1<<(63-k)) != 0 {
			r ^= streebogA[k]
		}
	}
	return r
}

// lpsXor sets out = LPS(a ⊕ b). After the transposition τ, output word i is
// built from byte i of every input word j, which lands in byte j. The
// inputs are loaded into locals first so that out may alias a or b.
func lpsXor(out, a, b *[8]uint64) {
	t := &streebogLPS
	x0, x1, x2, x3 := a[0]^b[0], a[1]^b[1], a[2]^b[2], a[3]^b[3]
	x4, x5, x6, x7 := a[4]^b[4], a[5]^b[5], a[6]^b[6], a[7]^b[7]
	out[0] = t[0][byte(x0>>0)] ^
		t[1][byte(x1>>0)] ^
		t[2][byte(x2>>0)] ^
		t[3][byte(x3>>0)] ^
		t[4][byte(x4>>0)] ^
		t[5][byte(x5>>0)] ^
		t[6][byte(x6>>0)] ^
		t[7][byte(x7>>0)]
	out[1] = t[0][byte(x0>>8)] ^
		t[1][byte(x1>>8)] ^
		t[2][byte(x2>>8)] ^
		t[3][byte(x3>>8)] ^
		t[4][byte(x4>>8)] ^
		t[5][byte(x5>>8)] ^
		t[6][byte(x6>>8)] ^
		t[7][byte(x7>>8)]
	out[2] = t[0][byte(x0>>16)] ^
		t[1][byte(x1>>16)] ^
		t[2][byte(x2>>16)] ^
		t[3][byte(x3>>16)] ^
		t[4][byte(x4>>16)] ^
		t[5][byte(x5>>16)] ^
		t[6][byte(x6>>16)] ^
		t[7][byte(x7>>16)]
	out[3] = t[0][byte(x0>>24)] ^
		t[1][byte(x1>>24)] ^
		t[2][byte(x2>>24)] ^
		t[3][byte(x3>>24)] ^
		t[4][byte(x4>>24)] ^
		t[5][byte(x5>>24)] ^
		t[6][byte(x6>>24)] ^
		t[7][byte(x7>>24)]
	out[4] = t[0][byte(x0>>32)] ^
		t[1][byte(x1>>32)] ^
		t[2][byte(x2>>32)] ^
		t[3][byte(x3>>32)] ^
		t[4][byte(x4>>32)] ^
		t[5][byte(x5>>32)] ^
		t[6][byte(x6>>32)] ^
		t[7][byte(x7>>32)]
	out[5] = t[0][byte(x0>>40)] ^
		t[1][byte(x1>>40)] ^
		t[2][byte(x2>>40)] ^
		t[3][byte(x3>>40)] ^
		t[4][byte(x4>>40)] ^
		t[5][byte(x5>>40)] ^
		t[6][byte(x6>>40)] ^
		t[7][byte(x7>>40)]
	out[6] = t[0][byte(x0>>48)] ^
		t[1][byte(x1>>48)] ^
		t[2][byte(x2>>48)] ^
		t[3][byte(x3>>48)] ^
		t[4][byte(x4>>48)] ^
		t[5][byte(x5>>48)] ^
		t[6][byte(x6>>48)] ^
		t[7][byte(x7>>48)]
	out[7] = t[0][byte(x0>>56)] ^
		t[1][byte(x1>>56)] ^
		t[2][byte(x2>>56)] ^
		t[3][byte(x3>>56)] ^
		t[4][byte(x4>>56)] ^
		t[5][byte(x5>>56)] ^
		t[6][byte(x6>>56)] ^
		t[7][byte(x7>>56)]
}

// compress is g_N(h, m) = E(LPS(h ⊕ N), m) ⊕ h ⊕ m (RFC 6986 section 7).
func compress(h *[8]uint64, n uint64, m *[8]uint64) {
	nv := [8]uint64{n}
	var k, s [8]uint64
	lpsXor(&k, h, &nv)
	s = *m
	for i := 0; i < 12; i++ {
		lpsXor(&s, &s, &k)
		lpsXor(&k, &k, &streebogC[i])
	}
	for w := 0; w < 8; w++ {
		h[w] ^= s[w] ^ k[w] ^ m[w]
	}
}

// add512 adds m to sum modulo 2^512 (the Σ checksum of RFC 6986).
func add512(sum *[8]uint64, m *[8]uint64) {
	var carry uint64
	for i := 0; i < 8; i++ {
		a := sum[i]
		s := a + m[i]
		c1 := uint64(0)
		if s < a {
			c1 = 1
		}
		s2 := s + carry
		if s2 < s {
			c1 = 1
		}
		sum[i] = s2
		carry = c1
	}
}

// Streebog is a running Streebog-256 or Streebog-512 computation. It
// implements hash.Hash; Sum returns the digest bytes in the order gost12sum and
// OpenSSL print them.
type Streebog struct {
	size  int
	h     [8]uint64
	sigma [8]uint64
	n     uint64 // bits processed; messages beyond 2^61 bytes are not a concern here
	buf   [streebogBlockSize]byte
	nbuf  int
}

// NewStreebog256 returns a Streebog hash with a 32-byte output.
func NewStreebog256() hash.Hash { return newStreebog(32) }

// NewStreebog512 returns a Streebog hash with a 64-byte output.
func NewStreebog512() hash.Hash { return newStreebog(64) }

func newStreebog(size int) *Streebog {
	d := &Streebog{size: size}
	d.Reset()
	return d
}

// Streebog256 returns the Streebog-256 digest of data.
func Streebog256(data []byte) [32]byte {
	d := newStreebog(32)
	d.Write(data)
	var out [32]byte
	d.Sum(out[:0])
	return out
}

// Streebog512 returns the Streebog-512 digest of data.
func Streebog512(data []byte) [64]byte {
	d := newStreebog(64)
	d.Write(data)
	var out [64]byte
	d.Sum(out[:0])
	return out
}

// Reset restores the initial state: IV of 0x01 bytes for the 256-bit
// variant, all zeros for the 512-bit one.
func (d *Streebog) Reset() {
	iv := uint64(0)
	if d.size == 32 {
		iv = 0x0101010101010101
	}
	for i := range d.h {
		d.h[i] = iv
		d.sigma[i] = 0
	}
	d.n = 0
	d.nbuf = 0
}

// Size returns the digest length in bytes.
func (d *Streebog) Size() int { return d.size }

// BlockSize returns 64, the Streebog block size.
func (d *Streebog) BlockSize() int { return streebogBlockSize }

func (d *Streebog) block(p []byte) {
	var m [8]uint64
	for i := range m {
		m[i] = binary.LittleEndian.Uint64(p[8*i:])
	}
	compress(&d.h, d.n, &m)
	add512(&d.sigma, &m)
	d.n += 512
}

// Write absorbs p; it never fails.
func (d *Streebog) Write(p []byte) (int, error) {
	total := len(p)
	if d.nbuf > 0 {
		c := copy(d.buf[d.nbuf:], p)
		d.nbuf += c
		p = p[c:]
		if d.nbuf < streebogBlockSize {
			return total, nil
		}
		d.block(d.buf[:])
		d.nbuf = 0
	}
	for len(p) >= streebogBlockSize {
		d.block(p[:streebogBlockSize])
		p = p[streebogBlockSize:]
	}
	d.nbuf = copy(d.buf[:], p)
	return total, nil
}

// Sum appends the digest to in without changing the running state.
func (d *Streebog) Sum(in []byte) []byte {
	h := d.h
	sigma := d.sigma
	var last [streebogBlockSize]byte
	copy(last[:], d.buf[:d.nbuf])
	last[d.nbuf] = 1
	var m [8]uint64
	for i := range m {
		m[i] = binary.LittleEndian.Uint64(last[8*i:])
	}
	compress(&h, d.n, &m)
	add512(&sigma, &m)
	length := [8]uint64{d.n + uint64(d.nbuf)*8}
	compress(&h, 0, &length)
	compress(&h, 0, &sigma)
	var out [64]byte
	for i := range h {
		binary.LittleEndian.PutUint64(out[8*i:], h[i])
	}
	// The 256-bit digest is the most significant half of the 512-bit state,
	// which in this byte order is the second half.
	return append(in, out[64-d.size:]...)
}
