package gost

import (
	"encoding/asn1"
	"math/big"
)

// Params is a GOST R 34.10 elliptic curve in short Weierstrass form
// y² = x³ + ax + b over GF(p), with base point (X, Y) of prime order Q.
// Curves that RFC 7836 defines in twisted Edwards form (tc26 256 paramSetA and
// 512 paramSetC) are used through their Weierstrass equivalents, which is
// what signatures and keys are defined over.
type Params struct {
	Name string                // RFC name, e.g. "id-tc26-gost-3410-12-256-paramSetA"
	OID  asn1.ObjectIdentifier // publicKeyParamSet OID
	P    *big.Int
	A    *big.Int
	B    *big.Int
	Q    *big.Int
	X    *big.Int
	Y    *big.Int

	size int // bytes per coordinate and per scalar: 32 or 64
}

// Size returns the byte length of a coordinate or scalar: 32 for 256-bit
// curves, 64 for 512-bit ones.
func (c *Params) Size() int { return c.size }

func hexInt(s string) *big.Int {
	v, ok := new(big.Int).SetString(s, 16)
	if !ok {
		panic("gost: bad curve constant " + s)
	}
	return v
}

func newParams(name string, oid asn1.ObjectIdentifier, size int, p, a, b, q, x, y string) *Params {
	return &Params{Name: name, OID: oid, P: hexInt(p), A: hexInt(a), B: hexInt(b), Q: hexInt(q),
		X: hexInt(x), Y: hexInt(y), size: size}
}

// The curve constants are those of RFC 4357 section 11.4 (CryptoPro) and
// RFC 7836 appendix A.2 (TC26). The tc26 256-bit sets B, C and D are the
// CryptoPro A, B and C curves under new OIDs; XchA and XchB reuse CryptoPro A
// and C.
const (
	cpAP = "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFD97"
	cpAA = "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFD94"
	cpAB = "A6"
	cpAQ = "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF6C611070995AD10045841B09B761B893"
	cpAX = "1"
	cpAY = "8D91E471E0989CDA27DF505A453F2B7635294F2DDF23E3B122ACC99C9E9F1E14"

	cpBP = "8000000000000000000000000000000000000000000000000000000000000C99"
	cpBA = "8000000000000000000000000000000000000000000000000000000000000C96"
	cpBB = "3E1AF419A269A5F866A7D3C25C3DF80AE979259373FF2B182F49D4CE7E1BBC8B"
	cpBQ = "800000000000000000000000000000015F700CFFF1A624E5E497161BCC8A198F"
	cpBX = "1"
	cpBY = "3FA8124359F96680B83D1C3EB2C070E5C545C9858D03ECFB744BF8D717717EFC"

	cpCP = "9B9F605F5A858107AB1EC85E6B41C8AACF846E86789051D37998F7B9022D759B"
	cpCA = "9B9F605F5A858107AB1EC85E6B41C8AACF846E86789051D37998F7B9022D7598"
	cpCB = "805A"
	cpCQ = "9B9F605F5A858107AB1EC85E6B41C8AA582CA3511EDDFB74F02F3A6598980BB9"
	cpCX = "0"
	cpCY = "41ECE55743711A8C3CBF3783CD08C0EE4D4DC440D4641A8F366E550DFDB3BB67"
)

// Named parameter sets.
var (
	TC26256A = newParams("id-tc26-gost-3410-12-256-paramSetA", asn1.ObjectIdentifier{1, 2, 643, 7, 1, 2, 1, 1, 1}, 32,
		"FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFD97",
		"C2173F1513981673AF4892C23035A27CE25E2013BF95AA33B22C656F277E7335",
		"295F9BAE7428ED9CCC20E7C359A9D41A22FCCD9108E17BF7BA9337A6F8AE9513",
		"400000000000000000000000000000000FD8CDDFC87B6635C115AF556C360C67",
		"91E38443A5E82C0D880923425712B2BB658B9196932E02C78B2582FE742DAA28",
		"32879423AB1A0375895786C4BB46E9565FDE0B5344766740AF268ADB32322E5C")
	TC26256B = newParams("id-tc26-gost-3410-12-256-paramSetB", asn1.ObjectIdentifier{1, 2, 643, 7, 1, 2, 1, 1, 2}, 32,
		cpAP, cpAA, cpAB, cpAQ, cpAX, cpAY)
	TC26256C = newParams("id-tc26-gost-3410-12-256-paramSetC", asn1.ObjectIdentifier{1, 2, 643, 7, 1, 2, 1, 1, 3}, 32,
		cpBP, cpBA, cpBB, cpBQ, cpBX, cpBY)
	TC26256D = newParams("id-tc26-gost-3410-12-256-paramSetD", asn1.ObjectIdentifier{1, 2, 643, 7, 1, 2, 1, 1, 4}, 32,
		cpCP, cpCA, cpCB, cpCQ, cpCX, cpCY)
	CryptoProA = newParams("id-GostR3410-2001-CryptoPro-A-ParamSet", asn1.ObjectIdentifier{1, 2, 643, 2, 2, 35, 1}, 32,
		cpAP, cpAA, cpAB, cpAQ, cpAX, cpAY)
	CryptoProB = newParams("id-GostR3410-2001-CryptoPro-B-ParamSet", asn1.ObjectIdentifier{1, 2, 643, 2, 2, 35, 2}, 32,
		cpBP, cpBA, cpBB, cpBQ, cpBX, cpBY)
	CryptoProC = newParams("id-GostR3410-2001-CryptoPro-C-ParamSet", asn1.ObjectIdentifier{1, 2, 643, 2, 2, 35, 3}, 32,
		cpCP, cpCA, cpCB, cpCQ, cpCX, cpCY)
	CryptoProXchA = newParams("id-GostR3410-2001-CryptoPro-XchA-ParamSet", asn1.ObjectIdentifier{1, 2, 643, 2, 2, 36, 0}, 32,
		cpAP, cpAA, cpAB, cpAQ, cpAX, cpAY)
	CryptoProXchB = newParams("id-GostR3410-2001-CryptoPro-XchB-ParamSet", asn1.ObjectIdentifier{1, 2, 643, 2, 2, 36, 1}, 32,
		cpCP, cpCA, cpCB, cpCQ, cpCX, cpCY)

	TC26512A = newParams("id-tc26-gost-3410-12-512-paramSetA", asn1.ObjectIdentifier{1, 2, 643, 7, 1, 2, 1, 2, 1}, 64,
		"FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFDC7",
		"FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFDC4",
		"E8C2505DEDFC86DDC1BD0B2B6667F1DA34B82574761CB0E879BD081CFD0B6265EE3CB090F30D27614CB4574010DA90DD862EF9D4EBEE4761503190785A71C760",
		"FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF27E69532F48D89116FF22B8D4E0560609B4B38ABFAD2B85DCACDB1411F10B275",
		"3",
		"7503CFE87A836AE3A61B8816E25450E6CE5E1C93ACF1ABC1778064FDCBEFA921DF1626BE4FD036E93D75E6A50E3A41E98028FE5FC235F5B889A589CB5215F2A4")
	TC26512B = newParams("id-tc26-gost-3410-12-512-paramSetB", asn1.ObjectIdentifier{1, 2, 643, 7, 1, 2, 1, 2, 2}, 64,
		"8000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000006F",
		"8000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000006C",
		"687D1B459DC841457E3E06CF6F5E2517B97C7D614AF138BCBF85DC806C4B289F3E965D2DB1416D217F8B276FAD1AB69C50F78BEE1FA3106EFB8CCBC7C5140116",
		"800000000000000000000000000000000000000000000000000000000000000149A1EC142565A545ACFDB77BD9D40CFA8B996712101BEA0EC6346C54374F25BD",
		"2",
		"1A8F7EDA389B094C2C071E3647A8940F3C123B697578C213BE6DD9E6C8EC7335DCB228FD1EDF4A39152CBCAAF8C0398828041055F94CEEEC7E21340780FE41BD")
	TC26512C = newParams("id-tc26-gost-3410-12-512-paramSetC", asn1.ObjectIdentifier{1, 2, 643, 7, 1, 2, 1, 2, 3}, 64,
		"FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFDC7",
		"DC9203E514A721875485A529D2C722FB187BC8980EB866644DE41C68E143064546E861C0E2C9EDD92ADE71F46FCF50FF2AD97F951FDA9F2A2EB6546F39689BD3",
		"B4C4EE28CEBC6C2C8AC12952CF37F16AC7EFB6A9F69F4B57FFDA2E4F0DE5ADE038CBC2FFF719D2C18DE0284B8BFEF3B52B8CC7A5F5BF0A3C8D2319A5312557E1",
		"3FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFC98CDBA46506AB004C33A9FF5147502CC8EDA9E7A769A12694623CEF47F023ED",
		"E2E31EDFC23DE7BDEBE241CE593EF5DE2295B7A9CBAEF021D385F7074CEA043AA27272A7AE602BF2A7B9033DB9ED3610C6FB85487EAE97AAC5BC7928C1950148",
		"F5CE40D95B5EB899ABBCCFF5911CB8577939804D6527378B8C108C3D2090FF9BE18E2D33E3021ED2EF32D85822423B6304F726AA854BAE07D0396E9A9ADDC40F")
)

// AllParams lists every supported parameter set, 256-bit first.
var AllParams = []*Params{TC26256A, TC26256B, TC26256C, TC26256D, CryptoProA, CryptoProB, CryptoProC,
	CryptoProXchA, CryptoProXchB, TC26512A, TC26512B, TC26512C}

// ParamsByOID returns the parameter set named by a publicKeyParamSet OID.
func ParamsByOID(oid asn1.ObjectIdentifier) (*Params, bool) {
	for _, p := range AllParams {
		if p.OID.Equal(oid) {
			return p, true
		}
	}
	return nil, false
}

// jacobian is a point in Jacobian coordinates (X/Z², Y/Z³); Z = 0 is the
// point at infinity. math/big is variable-time; see the package comment.
type jacobian struct{ x, y, z *big.Int }

func (c *Params) infinity() jacobian {
	return jacobian{new(big.Int), new(big.Int), new(big.Int)}
}

func (c *Params) fromAffine(x, y *big.Int) jacobian {
	return jacobian{new(big.Int).Set(x), new(big.Int).Set(y), big.NewInt(1)}
}

func (c *Params) toAffine(p jacobian) (x, y *big.Int, ok bool) {
	if p.z.Sign() == 0 {
		return nil, nil, false
	}
	zinv := new(big.Int).ModInverse(p.z, c.P)
	zinv2 := new(big.Int).Mul(zinv, zinv)
	zinv2.Mod(zinv2, c.P)
	x = new(big.Int).Mul(p.x, zinv2)
	x.Mod(x, c.P)
	zinv2.Mul(zinv2, zinv)
	y = new(big.Int).Mul(p.y, zinv2)
	y.Mod(y, c.P)
	return x, y, true
}

func (c *Params) mulMod(a, b *big.Int) *big.Int {
	r := new(big.Int).Mul(a, b)
	return r.Mod(r, c.P)
}

// double uses the general-a doubling formulas ("dbl-2007-bl").
func (c *Params) double(p jacobian) jacobian {
	if p.z.Sign() == 0 || p.y.Sign() == 0 {
		return c.infinity()
	}
	P := c.P
	xx := c.mulMod(p.x, p.x)
	yy := c.mulMod(p.y, p.y)
	yyyy := c.mulMod(yy, yy)
	zz := c.mulMod(p.z, p.z)
	// S = 2*((X+YY)^2 - XX - YYYY)
	s := new(big.Int).Add(p.x, yy)
	s.Mul(s, s)
	s.Sub(s, xx)
	s.Sub(s, yyyy)
	s.Lsh(s, 1)
	s.Mod(s, P)
	// M = 3*XX + a*ZZ^2
	m := new(big.Int).Mul(zz, zz)
	m.Mod(m, P)
	m.Mul(m, c.A)
	m.Add(m, new(big.Int).Mul(xx, big.NewInt(3)))
	m.Mod(m, P)
	// X3 = M^2 - 2S
	x3 := new(big.Int).Mul(m, m)
	x3.Sub(x3, new(big.Int).Lsh(s, 1))
	x3.Mod(x3, P)
	// Y3 = M*(S - X3) - 8*YYYY
	y3 := new(big.Int).Sub(s, x3)
	y3.Mul(y3, m)
	y3.Sub(y3, new(big.Int).Lsh(yyyy, 3))
	y3.Mod(y3, P)
	// Z3 = (Y+Z)^2 - YY - ZZ
	z3 := new(big.Int).Add(p.y, p.z)
	z3.Mul(z3, z3)
	z3.Sub(z3, yy)
	z3.Sub(z3, zz)
	z3.Mod(z3, P)
	return jacobian{x3, y3, z3}
}

// add uses the "add-2007-bl" formulas and falls back to doubling when both
// inputs are the same point.
func (c *Params) add(p, q jacobian) jacobian {
	if p.z.Sign() == 0 {
		return q
	}
	if q.z.Sign() == 0 {
		return p
	}
	P := c.P
	z1z1 := c.mulMod(p.z, p.z)
	z2z2 := c.mulMod(q.z, q.z)
	u1 := c.mulMod(p.x, z2z2)
	u2 := c.mulMod(q.x, z1z1)
	s1 := c.mulMod(p.y, c.mulMod(q.z, z2z2))
	s2 := c.mulMod(q.y, c.mulMod(p.z, z1z1))
	h := new(big.Int).Sub(u2, u1)
	h.Mod(h, P)
	r := new(big.Int).Sub(s2, s1)
	r.Mod(r, P)
	if h.Sign() == 0 {
		if r.Sign() == 0 {
			return c.double(p)
		}
		return c.infinity()
	}
	i := new(big.Int).Lsh(h, 1)
	i = c.mulMod(i, i)
	j := c.mulMod(h, i)
	r.Lsh(r, 1)
	v := c.mulMod(u1, i)
	x3 := new(big.Int).Mul(r, r)
	x3.Sub(x3, j)
	x3.Sub(x3, new(big.Int).Lsh(v, 1))
	x3.Mod(x3, P)
	y3 := new(big.Int).Sub(v, x3)
	y3.Mul(y3, r)
	y3.Sub(y3, new(big.Int).Lsh(c.mulMod(s1, j), 1))
	y3.Mod(y3, P)
	z3 := new(big.Int).Add(p.z, q.z)
	z3.Mul(z3, z3)
	z3.Sub(z3, z1z1)
	z3.Sub(z3, z2z2)
	z3.Mul(z3, h)
	z3.Mod(z3, P)
	return jacobian{x3, y3, z3}
}

// scalarMult returns k·(x, y) by left-to-right double-and-add.
func (c *Params) scalarMult(x, y, k *big.Int) jacobian {
	pt := c.fromAffine(x, y)
	acc := c.infinity()
	for i := k.BitLen() - 1; i >= 0; i-- {
		acc = c.double(acc)
		if k.Bit(i) == 1 {
			acc = c.add(acc, pt)
		}
	}
	return acc
}

// twinMult returns k1·P1 + k2·P2 with Shamir's trick, sharing the doublings.
func (c *Params) twinMult(x1, y1, k1, x2, y2, k2 *big.Int) jacobian {
	p1 := c.fromAffine(x1, y1)
	p2 := c.fromAffine(x2, y2)
	sum := c.add(p1, p2)
	acc := c.infinity()
	n := k1.BitLen()
	if k2.BitLen() > n {
		n = k2.BitLen()
	}
	for i := n - 1; i >= 0; i-- {
		acc = c.double(acc)
		switch {
		case k1.Bit(i) == 1 && k2.Bit(i) == 1:
			acc = c.add(acc, sum)
		case k1.Bit(i) == 1:
			acc = c.add(acc, p1)
		case k2.Bit(i) == 1:
			acc = c.add(acc, p2)
		}
	}
	return acc
}

// IsOnCurve reports whether (x, y) satisfies the curve equation with both
// coordinates reduced modulo p.
func (c *Params) IsOnCurve(x, y *big.Int) bool {
	if x == nil || y == nil || x.Sign() < 0 || y.Sign() < 0 || x.Cmp(c.P) >= 0 || y.Cmp(c.P) >= 0 {
		return false
	}
	lhs := c.mulMod(y, y)
	rhs := c.mulMod(c.mulMod(x, x), x)
	rhs.Add(rhs, c.mulMod(c.A, x))
	rhs.Add(rhs, c.B)
	rhs.Mod(rhs, c.P)
	return lhs.Cmp(rhs) == 0
}
