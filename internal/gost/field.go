package gost

import (
	"math/big"
	"math/bits"
)

// Fixed-width arithmetic modulo a 256- or 512-bit prime in Montgomery form.
// math/big allocates on every operation and dominated signing and
// verification time; this keeps field elements in fixed arrays. Elements use
// the first n limbs (little-endian 64-bit words) of a [maxLimbs]uint64.
// Additions and reductions select results with masks rather than branches;
// the point formulas above them still branch, so the whole is not constant
// time. On amd64 multiplication, addition and subtraction run in assembly
// (field_amd64.s, field_pm_amd64.s, field8_amd64.s); the Go code here is the
// fallback and the reference the assembly is tested against.

const maxLimbs = 8

type fe [maxLimbs]uint64

type montField struct {
	n    int // limbs: 4 or 8
	p    fe
	pInv uint64 // -p⁻¹ mod 2⁶⁴
	r2   fe     // R² mod p, R = 2^(64n)
	one  fe     // R mod p (1 in Montgomery form)
	pBig *big.Int
	// invDigits are the 4-bit digits of p − 2, most significant first,
	// for inv.
	invDigits []uint8
	// pseudoMersenne is set for 4-limb p = 2²⁵⁶ − pmC, which the assembly
	// multiplies with a cheaper reduction (field_pm_amd64.s).
	pseudoMersenne bool
	pmC            uint64
}

func newMontField(p *big.Int, n int) *montField {
	f := &montField{n: n, pBig: new(big.Int).Set(p)}
	f.p = limbsFromBig(p, n)
	// Newton iteration for p⁻¹ mod 2⁶⁴: each step doubles the correct bits.
	inv := uint64(1)
	for i := 0; i < 6; i++ {
		inv *= 2 - f.p[0]*inv
	}
	f.pInv = -inv
	r := new(big.Int).Lsh(big.NewInt(1), uint(64*n))
	f.one = limbsFromBig(new(big.Int).Mod(r, p), n)
	r2 := new(big.Int).Mul(r, r)
	f.r2 = limbsFromBig(r2.Mod(r2, p), n)
	if n == 4 && f.p[1] == ^uint64(0) && f.p[2] == ^uint64(0) && f.p[3] == ^uint64(0) {
		f.pseudoMersenne, f.pmC = true, -f.p[0]
	}
	e := new(big.Int).Sub(p, big.NewInt(2))
	for i := (e.BitLen()+3)/4 - 1; i >= 0; i-- {
		f.invDigits = append(f.invDigits, uint8(e.Bit(4*i)|e.Bit(4*i+1)<<1|e.Bit(4*i+2)<<2|e.Bit(4*i+3)<<3))
	}
	return f
}

func limbsFromBig(x *big.Int, n int) fe {
	var out fe
	var buf [8 * maxLimbs]byte
	x.FillBytes(buf[:8*n])
	for i := 0; i < n; i++ {
		// buf is big-endian; limb i holds bytes from the end.
		off := 8*n - 8*(i+1)
		var w uint64
		for j := 0; j < 8; j++ {
			w = w<<8 | uint64(buf[off+j])
		}
		out[i] = w
	}
	return out
}

func bigFromLimbs(x *fe, n int) *big.Int {
	buf := make([]byte, 8*n)
	for i := 0; i < n; i++ {
		off := 8*n - 8*(i+1)
		w := x[i]
		for j := 7; j >= 0; j-- {
			buf[off+j] = byte(w)
			w >>= 8
		}
	}
	return new(big.Int).SetBytes(buf)
}

// toMont converts a reduced integer into Montgomery form.
func (f *montField) toMont(x *big.Int) fe {
	v := limbsFromBig(x, f.n)
	var z fe
	f.mul(&z, &v, &f.r2)
	return z
}

// fromMont converts back to an ordinary integer.
func (f *montField) fromMont(x *fe) *big.Int {
	one := fe{1}
	var z fe
	f.mul(&z, x, &one)
	return bigFromLimbs(&z, f.n)
}

// mulGeneric sets z = x·y·R⁻¹ mod p (CIOS Montgomery multiplication) in Go.
// z may alias x or y. mul, add and sub (field_amd64.go, field_other.go)
// fall back to the Go code where no assembly applies.
func (f *montField) mulGeneric(z, x, y *fe) {
	if f.n == 4 {
		f.mul4Generic(z, x, y)
		return
	}
	n := f.n
	var t [maxLimbs + 2]uint64
	for i := 0; i < n; i++ {
		yi := y[i]
		var c, cc uint64
		for j := 0; j < n; j++ {
			hi, lo := bits.Mul64(x[j], yi)
			lo, cc = bits.Add64(lo, t[j], 0)
			hi += cc
			lo, cc = bits.Add64(lo, c, 0)
			hi += cc
			t[j] = lo
			c = hi
		}
		t[n], cc = bits.Add64(t[n], c, 0)
		t[n+1] = cc

		m := t[0] * f.pInv
		hi, lo := bits.Mul64(m, f.p[0])
		_, cc = bits.Add64(lo, t[0], 0)
		c = hi + cc
		for j := 1; j < n; j++ {
			hi, lo = bits.Mul64(m, f.p[j])
			lo, cc = bits.Add64(lo, t[j], 0)
			hi += cc
			lo, cc = bits.Add64(lo, c, 0)
			hi += cc
			t[j-1] = lo
			c = hi
		}
		t[n-1], cc = bits.Add64(t[n], c, 0)
		t[n] = t[n+1] + cc
	}
	f.reduceOnce(z, &t)
}

// reduceOnce sets z = t - p if t ≥ p, else t, for t < 2p held in n+1 limbs.
func (f *montField) reduceOnce(z *fe, t *[maxLimbs + 2]uint64) {
	n := f.n
	var d fe
	var b uint64
	for j := 0; j < n; j++ {
		d[j], b = bits.Sub64(t[j], f.p[j], b)
	}
	_, b = bits.Sub64(t[n], 0, b)
	// b = 1 means t < p: keep t.
	keep := -b
	for j := 0; j < n; j++ {
		z[j] = t[j]&keep | d[j]&^keep
	}
}

// addGeneric sets z = x + y mod p in Go.
func (f *montField) addGeneric(z, x, y *fe) {
	if f.n == 4 {
		f.add4(z, x, y)
		return
	}
	var t [maxLimbs + 2]uint64
	var c uint64
	for j := 0; j < f.n; j++ {
		t[j], c = bits.Add64(x[j], y[j], c)
	}
	t[f.n] = c
	f.reduceOnce(z, &t)
}

// subGeneric sets z = x − y mod p in Go.
func (f *montField) subGeneric(z, x, y *fe) {
	if f.n == 4 {
		f.sub4(z, x, y)
		return
	}
	var d fe
	var b uint64
	for j := 0; j < f.n; j++ {
		d[j], b = bits.Sub64(x[j], y[j], b)
	}
	// On borrow add p back.
	mask := -b
	var c uint64
	for j := 0; j < f.n; j++ {
		z[j], c = bits.Add64(d[j], f.p[j]&mask, c)
	}
}

func (f *montField) isZero(x *fe) bool {
	var acc uint64
	for j := 0; j < f.n; j++ {
		acc |= x[j]
	}
	return acc == 0
}

// inv sets z = x⁻¹ by Fermat's little theorem, x^(p−2), with a fixed 4-bit
// window over the exponent's digits (invDigits): about 256 squarings and 64
// multiplications, where bit-by-bit square-and-multiply needed a
// multiplication for nearly every bit of p − 2 on primes like 2²⁵⁶ − 617.
// The sequence of operations depends only on p, not on x.
func (f *montField) inv(z, x *fe) {
	var table [16]fe
	table[0] = f.one
	table[1] = *x
	for i := 2; i < 16; i++ {
		f.mul(&table[i], &table[i-1], x)
	}
	r := table[f.invDigits[0]]
	for _, d := range f.invDigits[1:] {
		for s := 0; s < 4; s++ {
			f.sqr(&r, &r)
		}
		f.mul(&r, &r, &table[d])
	}
	*z = r
}

// equal reports whether x and y are the same field element; both must be
// fully reduced, as every operation here leaves them.
func (f *montField) equal(x, y *fe) bool {
	var acc uint64
	for j := 0; j < f.n; j++ {
		acc |= x[j] ^ y[j]
	}
	return acc == 0
}

// mul4Generic is mul for 256-bit fields with the loop bounds fixed, which
// lets the compiler drop bounds checks; 256-bit keys are the common case.
// mulGeneric runs it where the assembly is unavailable, and the assembly
// must match it bit for bit.
func (f *montField) mul4Generic(z, x, y *fe) {
	var t0, t1, t2, t3, t4, t5 uint64
	x0, x1, x2, x3 := x[0], x[1], x[2], x[3]
	p0, p1, p2, p3 := f.p[0], f.p[1], f.p[2], f.p[3]
	for i := 0; i < 4; i++ {
		yi := y[i]
		var c, cc, hi, lo uint64
		hi, lo = bits.Mul64(x0, yi)
		t0, cc = bits.Add64(lo, t0, 0)
		c = hi + cc
		hi, lo = bits.Mul64(x1, yi)
		lo, cc = bits.Add64(lo, t1, 0)
		hi += cc
		t1, cc = bits.Add64(lo, c, 0)
		c = hi + cc
		hi, lo = bits.Mul64(x2, yi)
		lo, cc = bits.Add64(lo, t2, 0)
		hi += cc
		t2, cc = bits.Add64(lo, c, 0)
		c = hi + cc
		hi, lo = bits.Mul64(x3, yi)
		lo, cc = bits.Add64(lo, t3, 0)
		hi += cc
		t3, cc = bits.Add64(lo, c, 0)
		c = hi + cc
		t4, cc = bits.Add64(t4, c, 0)
		t5 = cc

		m := t0 * f.pInv
		hi, lo = bits.Mul64(m, p0)
		_, cc = bits.Add64(lo, t0, 0)
		c = hi + cc
		hi, lo = bits.Mul64(m, p1)
		lo, cc = bits.Add64(lo, t1, 0)
		hi += cc
		t0, cc = bits.Add64(lo, c, 0)
		c = hi + cc
		hi, lo = bits.Mul64(m, p2)
		lo, cc = bits.Add64(lo, t2, 0)
		hi += cc
		t1, cc = bits.Add64(lo, c, 0)
		c = hi + cc
		hi, lo = bits.Mul64(m, p3)
		lo, cc = bits.Add64(lo, t3, 0)
		hi += cc
		t2, cc = bits.Add64(lo, c, 0)
		c = hi + cc
		t3, cc = bits.Add64(t4, c, 0)
		t4 = t5 + cc
	}
	var d0, d1, d2, d3, b uint64
	d0, b = bits.Sub64(t0, p0, 0)
	d1, b = bits.Sub64(t1, p1, b)
	d2, b = bits.Sub64(t2, p2, b)
	d3, b = bits.Sub64(t3, p3, b)
	_, b = bits.Sub64(t4, 0, b)
	keep := -b
	z[0] = t0&keep | d0&^keep
	z[1] = t1&keep | d1&^keep
	z[2] = t2&keep | d2&^keep
	z[3] = t3&keep | d3&^keep
}

// add4 and sub4 are add and sub unrolled for 256-bit fields.
func (f *montField) add4(z, x, y *fe) {
	t0, c := bits.Add64(x[0], y[0], 0)
	t1, c := bits.Add64(x[1], y[1], c)
	t2, c := bits.Add64(x[2], y[2], c)
	t3, c := bits.Add64(x[3], y[3], c)
	d0, b := bits.Sub64(t0, f.p[0], 0)
	d1, b := bits.Sub64(t1, f.p[1], b)
	d2, b := bits.Sub64(t2, f.p[2], b)
	d3, b := bits.Sub64(t3, f.p[3], b)
	_, b = bits.Sub64(c, 0, b)
	keep := -b
	z[0] = t0&keep | d0&^keep
	z[1] = t1&keep | d1&^keep
	z[2] = t2&keep | d2&^keep
	z[3] = t3&keep | d3&^keep
}

func (f *montField) sub4(z, x, y *fe) {
	d0, b := bits.Sub64(x[0], y[0], 0)
	d1, b := bits.Sub64(x[1], y[1], b)
	d2, b := bits.Sub64(x[2], y[2], b)
	d3, b := bits.Sub64(x[3], y[3], b)
	mask := -b
	var c uint64
	z[0], c = bits.Add64(d0, f.p[0]&mask, 0)
	z[1], c = bits.Add64(d1, f.p[1]&mask, c)
	z[2], c = bits.Add64(d2, f.p[2]&mask, c)
	z[3], _ = bits.Add64(d3, f.p[3]&mask, c)
}
