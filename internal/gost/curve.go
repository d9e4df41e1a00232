package gost

import (
	"encoding/asn1"
	"math/big"
	"sync"
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

// curveArith holds a curve's constants in Montgomery form.
type curveArith struct {
	f      *montField
	a      fe
	gx, gy fe
	// aMinus3 is set for curves with a = p − 3 (the CryptoPro sets, the
	// 512-bit sets A and B), whose doubling takes the cheaper formulas.
	aMinus3 bool
	q       *big.Int // the order of G

	// Tables of multiples of G, built on first use (base_point_table.go,
	// verify_mult.go).
	baseOnce    sync.Once
	base        *affineTable
	baseOddOnce sync.Once
	baseOdd     *affineTable

	// ed is the twisted Edwards form verification uses where the curve has
	// one (tc26 256 A and 512 C), else nil (edwards.go).
	ed         *edwardsForm
	edBaseOnce sync.Once
	edBaseOdd  []edCached
}

// arithCache maps *Params to its *curveArith, built on first use so that
// Params literals (as in the RFC example tests) need no constructor.
var arithCache sync.Map

func (c *Params) arith() *curveArith {
	if v, ok := arithCache.Load(c); ok {
		return v.(*curveArith)
	}
	f := newMontField(c.P, c.size/8)
	ca := &curveArith{f: f, a: f.toMont(new(big.Int).Mod(c.A, c.P)),
		gx: f.toMont(c.X), gy: f.toMont(c.Y), q: new(big.Int).Set(c.Q)}
	ca.aMinus3 = new(big.Int).Mod(new(big.Int).Add(c.A, big.NewInt(3)), c.P).Sign() == 0
	if !ca.aMinus3 {
		ca.ed = newEdwardsForm(f, new(big.Int).Mod(c.A, c.P), c.B)
	}
	v, _ := arithCache.LoadOrStore(c, ca)
	return v.(*curveArith)
}

// point is in Jacobian coordinates (X/Z², Y/Z³), Montgomery form; Z = 0 is
// the point at infinity.
type point struct{ x, y, z fe }

func (ca *curveArith) affinePoint(x, y *fe) point {
	return point{x: *x, y: *y, z: ca.f.one}
}

// double sets r = 2p: "dbl-2001-b" (3 multiplications, 5 squarings) when
// a = −3, else the general-a formulas. Doublings are most of a scalar
// multiplication, so the cheaper form shortens every verification on
// those curves by about a tenth.
func (ca *curveArith) double(r, p *point) {
	if ca.aMinus3 {
		ca.doubleMinus3(r, p)
		return
	}
	ca.doubleGeneral(r, p)
}

// doubleMinus3 sets r = 2p with "dbl-2001-b", valid only for a = −3:
// alpha = 3·(X − Z²)·(X + Z²) equals 3X² + a·Z⁴ there.
func (ca *curveArith) doubleMinus3(r, p *point) {
	f := ca.f
	if f.isZero(&p.z) || f.isZero(&p.y) {
		*r = point{}
		return
	}
	var delta, gamma, beta, alpha, t, u, x3, y3, z3 fe
	f.sqr(&delta, &p.z)
	f.sqr(&gamma, &p.y)
	f.mul(&beta, &p.x, &gamma)
	f.sub(&t, &p.x, &delta)
	f.add(&u, &p.x, &delta)
	f.mul(&alpha, &t, &u)
	f.add(&t, &alpha, &alpha)
	f.add(&alpha, &t, &alpha)
	// X3 = alpha² − 8·beta
	f.add(&beta, &beta, &beta)
	f.add(&beta, &beta, &beta) // 4·beta
	f.sqr(&x3, &alpha)
	f.add(&t, &beta, &beta)
	f.sub(&x3, &x3, &t)
	// Z3 = (Y + Z)² − gamma − delta
	f.add(&z3, &p.y, &p.z)
	f.sqr(&z3, &z3)
	f.sub(&z3, &z3, &gamma)
	f.sub(&z3, &z3, &delta)
	// Y3 = alpha·(4·beta − X3) − 8·gamma²
	f.sub(&t, &beta, &x3)
	f.mul(&y3, &alpha, &t)
	f.sqr(&gamma, &gamma)
	f.add(&gamma, &gamma, &gamma)
	f.add(&gamma, &gamma, &gamma)
	f.add(&gamma, &gamma, &gamma)
	f.sub(&y3, &y3, &gamma)
	r.x, r.y, r.z = x3, y3, z3
}

// doubleGeneral sets r = 2p with the general-a formulas "dbl-2007-bl".
func (ca *curveArith) doubleGeneral(r, p *point) {
	f := ca.f
	if f.isZero(&p.z) || f.isZero(&p.y) {
		*r = point{}
		return
	}
	var xx, yy, yyyy, zz, s, m, t, x3, y3, z3 fe
	f.sqr(&xx, &p.x)
	f.sqr(&yy, &p.y)
	f.sqr(&yyyy, &yy)
	f.sqr(&zz, &p.z)
	// S = 2·((X+YY)² − XX − YYYY)
	f.add(&s, &p.x, &yy)
	f.sqr(&s, &s)
	f.sub(&s, &s, &xx)
	f.sub(&s, &s, &yyyy)
	f.add(&s, &s, &s)
	// M = 3·XX + a·ZZ²
	f.sqr(&t, &zz)
	f.mul(&t, &t, &ca.a)
	f.add(&m, &xx, &xx)
	f.add(&m, &m, &xx)
	f.add(&m, &m, &t)
	// X3 = M² − 2S
	f.sqr(&x3, &m)
	f.sub(&x3, &x3, &s)
	f.sub(&x3, &x3, &s)
	// Z3 = (Y+Z)² − YY − ZZ
	f.add(&z3, &p.y, &p.z)
	f.sqr(&z3, &z3)
	f.sub(&z3, &z3, &yy)
	f.sub(&z3, &z3, &zz)
	// Y3 = M·(S − X3) − 8·YYYY
	f.sub(&t, &s, &x3)
	f.mul(&y3, &m, &t)
	f.add(&yyyy, &yyyy, &yyyy)
	f.add(&yyyy, &yyyy, &yyyy)
	f.add(&yyyy, &yyyy, &yyyy)
	f.sub(&y3, &y3, &yyyy)
	r.x, r.y, r.z = x3, y3, z3
}

// add sets r = p + q with the "add-2007-bl" formulas, falling back to
// doubling when both inputs are the same point.
func (ca *curveArith) add(r, p, q *point) {
	f := ca.f
	if f.isZero(&p.z) {
		*r = *q
		return
	}
	if f.isZero(&q.z) {
		*r = *p
		return
	}
	var z1z1, z2z2, u1, u2, s1, s2, h, rr, i, j, v, t, x3, y3, z3 fe
	f.sqr(&z1z1, &p.z)
	f.sqr(&z2z2, &q.z)
	f.mul(&u1, &p.x, &z2z2)
	f.mul(&u2, &q.x, &z1z1)
	f.mul(&t, &q.z, &z2z2)
	f.mul(&s1, &p.y, &t)
	f.mul(&t, &p.z, &z1z1)
	f.mul(&s2, &q.y, &t)
	f.sub(&h, &u2, &u1)
	f.sub(&rr, &s2, &s1)
	if f.isZero(&h) {
		if f.isZero(&rr) {
			ca.double(r, p)
			return
		}
		*r = point{}
		return
	}
	f.add(&i, &h, &h)
	f.sqr(&i, &i)
	f.mul(&j, &h, &i)
	f.add(&rr, &rr, &rr)
	f.mul(&v, &u1, &i)
	// X3 = r² − J − 2V
	f.sqr(&x3, &rr)
	f.sub(&x3, &x3, &j)
	f.sub(&x3, &x3, &v)
	f.sub(&x3, &x3, &v)
	// Y3 = r·(V − X3) − 2·S1·J
	f.sub(&t, &v, &x3)
	f.mul(&y3, &rr, &t)
	f.mul(&t, &s1, &j)
	f.add(&t, &t, &t)
	f.sub(&y3, &y3, &t)
	// Z3 = ((Z1+Z2)² − Z1Z1 − Z2Z2)·H
	f.add(&z3, &p.z, &q.z)
	f.sqr(&z3, &z3)
	f.sub(&z3, &z3, &z1z1)
	f.sub(&z3, &z3, &z2z2)
	f.mul(&z3, &z3, &h)
	r.x, r.y, r.z = x3, y3, z3
}

// toAffine returns the affine coordinates of p as integers; ok is false for
// the point at infinity.
func (c *Params) toAffine(p point) (x, y *big.Int, ok bool) {
	ca := c.arith()
	f := ca.f
	if f.isZero(&p.z) {
		return nil, nil, false
	}
	var zinv, zinv2, ax, ay fe
	f.inv(&zinv, &p.z)
	f.sqr(&zinv2, &zinv)
	f.mul(&ax, &p.x, &zinv2)
	f.mul(&zinv2, &zinv2, &zinv)
	f.mul(&ay, &p.y, &zinv2)
	return f.fromMont(&ax), f.fromMont(&ay), true
}

// IsOnCurve reports whether (x, y) satisfies the curve equation with both
// coordinates reduced modulo p.
func (c *Params) IsOnCurve(x, y *big.Int) bool {
	if x == nil || y == nil || x.Sign() < 0 || y.Sign() < 0 || x.Cmp(c.P) >= 0 || y.Cmp(c.P) >= 0 {
		return false
	}
	mulMod := func(a, b *big.Int) *big.Int {
		r := new(big.Int).Mul(a, b)
		return r.Mod(r, c.P)
	}
	lhs := mulMod(y, y)
	rhs := mulMod(mulMod(x, x), x)
	rhs.Add(rhs, mulMod(c.A, x))
	rhs.Add(rhs, c.B)
	rhs.Mod(rhs, c.P)
	return lhs.Cmp(rhs) == 0
}
