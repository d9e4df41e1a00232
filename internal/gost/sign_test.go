package gost

import (
	"bytes"
	"crypto/rand"
	"errors"
	"math/big"
	mrand "math/rand/v2"
	"testing"
	"time"
)

func hexBig(t testing.TB, s string) *big.Int {
	t.Helper()
	v, ok := new(big.Int).SetString(s, 16)
	if !ok {
		t.Fatalf("bad hex %q", s)
	}
	return v
}

// TestParamsConsistent checks every named curve: the base point is on the
// curve and has order q. A typo in any constant fails here.
func TestParamsConsistent(t *testing.T) {
	for _, c := range AllParams {
		t.Run(c.Name, func(t *testing.T) {
			if !c.IsOnCurve(c.X, c.Y) {
				t.Fatal("base point not on curve")
			}
			if !c.P.ProbablyPrime(20) || !c.Q.ProbablyPrime(20) {
				t.Fatal("p or q not prime")
			}
			if _, _, ok := c.toAffine(c.scalarMult(c.X, c.Y, c.Q)); ok {
				t.Fatal("q·G is not the point at infinity")
			}
			qm1 := new(big.Int).Sub(c.Q, big.NewInt(1))
			x, y, ok := c.toAffine(c.scalarMult(c.X, c.Y, qm1))
			if !ok || x.Cmp(c.X) != 0 || new(big.Int).Add(y, c.Y).Cmp(c.P) != 0 {
				t.Fatal("(q-1)·G is not -G")
			}
			if got, ok := ParamsByOID(c.OID); !ok || got != c {
				t.Fatal("ParamsByOID does not find the set")
			}
		})
	}
}

// rfc7091Examples are the two examples of RFC 7091 appendix A, where e is
// given as an integer.
var rfc7091Examples = []struct {
	name                  string
	p, a, b, q, x, y      string
	size                  int
	d, qx, qy, e, k, r, s string
}{
	{name: "Example1-256",
		p: "8000000000000000000000000000000000000000000000000000000000000431", a: "7",
		b: "5FBFF498AA938CE739B8E022FBAFEF40563F6E6A3472FC2A514C0CE9DAE23B7E",
		q: "8000000000000000000000000000000150FE8A1892976154C59CFC193ACCF5B3",
		x: "2", y: "08E2A8A0E65147D4BD6316030E16D19C85C97F0A9CA267122B96ABBCEA7E8FC8", size: 32,
		d:  "7A929ADE789BB9BE10ED359DD39A72C11B60961F49397EEE1D19CE9891EC3B28",
		qx: "7F2B49E270DB6D90D8595BEC458B50C58585BA1D4E9B788F6689DBD8E56FD80B",
		qy: "26F1B489D6701DD185C8413A977B3CBBAF64D1C593D26627DFFB101A87FF77DA",
		e:  "2DFBC1B372D89A1188C09C52E0EEC61FCE52032AB1022E8E67ECE6672B043EE5",
		k:  "77105C9B20BCD3122823C8CF6FCC7B956DE33814E95B7FE64FED924594DCEAB3",
		r:  "41AA28D2F1AB148280CD9ED56FEDA41974053554A42767B83AD043FD39DC0493",
		s:  "01456C64BA4642A1653C235A98A60249BCD6D3F746B631DF928014F6C5BF9C40"},
	{name: "Example2-512",
		p: "4531acd1fe0023c7550d267b6b2fee80922b14b2ffb90f04d4eb7c09b5d2d15df1d852741af4704a0458047e80e4546d35b8336fac224dd81664bbf528be6373", a: "7",
		b: "1cff0806a31116da29d8cfa54e57eb748bc5f377e49400fdd788b649eca1ac4361834013b2ad7322480a89ca58e0cf74bc9e540c2add6897fad0a3084f302adc",
		q: "4531acd1fe0023c7550d267b6b2fee80922b14b2ffb90f04d4eb7c09b5d2d15da82f2d7ecb1dbac719905c5eecc423f1d86e25edbe23c595d644aaf187e6e6df",
		x: "24d19cc64572ee30f396bf6ebbfd7a6c5213b3b3d7057cc825f91093a68cd762fd60611262cd838dc6b60aa7eee804e28bc849977fac33b4b530f1b120248a9a",
		y: "2bb312a43bd2ce6e0d020613c857acddcfbf061e91e5f2c3f32447c259f39b2c83ab156d77f1496bf7eb3351e1ee4e43dc1a18b91b24640b6dbb92cb1add371e", size: 64,
		d:  "0ba6048aadae241ba40936d47756d7c93091a0e8514669700ee7508e508b102072e8123b2200a0563322dad2827e2714a2636b7bfd18aadfc62967821fa18dd4",
		qx: "115dc5bc96760c7b48598d8ab9e740d4c4a85a65be33c1815b5c320c854621dd5a515856d13314af69bc5b924c8b4ddff75c45415c1d9dd9dd33612cd530efe1",
		qy: "37c7c90cd40b0f5621dc3ac1b751cfa0e2634fa0503b3d52639f5d7fb72afd61ea199441d943ffe7f0c70a2759a3cdb84c114e1f9339fdf27f35eca93677beec",
		e:  "3754f3cfacc9e0615c4f4a7c4d8dab531b09b6f9c170c533a71d147035b0c5917184ee536593f4414339976c647c5d5a407adedb1d560c4fc6777d2972075b8c",
		k:  "0359e7f4b1410feacc570456c6801496946312120b39d019d455986e364f365886748ed7a44b3e794434006011842286212273a6d14cf70ea3af71bb1ae679f1",
		r:  "2f86fa60a081091a23dd795e1e3c689ee512a3c82ee0dcc2643c78eea8fcacd35492558486b20f1c9ec197c90699850260c93bcbcd9c5c3317e19344e173ae36",
		s:  "1081b394696ffe8e6585e7a9362d26b6325f56778aadbc081c0bfbe933d52ff5823ce288e8c4f362526080df7f70ce406a6eeb1f56919cb92a9853bde73e5b4a"},
}

func TestRFC7091Examples(t *testing.T) {
	for _, ex := range rfc7091Examples {
		t.Run(ex.name, func(t *testing.T) {
			c := &Params{Name: ex.name, P: hexBig(t, ex.p), A: hexBig(t, ex.a), B: hexBig(t, ex.b), Q: hexBig(t, ex.q),
				X: hexBig(t, ex.x), Y: hexBig(t, ex.y), size: ex.size}
			priv, err := NewPrivateKey(c, hexBig(t, ex.d))
			if err != nil {
				t.Fatal(err)
			}
			if priv.X.Cmp(hexBig(t, ex.qx)) != 0 || priv.Y.Cmp(hexBig(t, ex.qy)) != 0 {
				t.Fatalf("public key = (%x, %x)", priv.X, priv.Y)
			}
			e := hexBig(t, ex.e)
			r, s, ok := signWithK(priv, e, hexBig(t, ex.k))
			if !ok || r.Cmp(hexBig(t, ex.r)) != 0 || s.Cmp(hexBig(t, ex.s)) != 0 {
				t.Fatalf("signature r=%x s=%x", r, s)
			}
			if !verifyE(&priv.PublicKey, e, r, s) {
				t.Fatal("example signature does not verify")
			}
			if verifyE(&priv.PublicKey, new(big.Int).Add(e, big.NewInt(1)), r, s) {
				t.Fatal("signature verifies for a different e")
			}
			// The packed form is s‖r; digest bytes are e little-endian.
			digest := make([]byte, ex.size)
			e.FillBytes(digest)
			reverse(digest)
			if err := Verify(&priv.PublicKey, digest, packSignature(c, r, s)); err != nil {
				t.Fatalf("Verify of packed s||r: %v", err)
			}
		})
	}
}

func TestSignVerifyRoundTrip(t *testing.T) {
	for _, c := range []*Params{TC26256A, TC26256B, CryptoProC, TC26512A, TC26512C} {
		t.Run(c.Name, func(t *testing.T) {
			priv, err := GenerateKey(c, rand.Reader)
			if err != nil {
				t.Fatal(err)
			}
			digest := Streebog256([]byte("amount=100.00"))
			sig, err := Sign(priv, digest[:], rand.Reader)
			if err != nil {
				t.Fatal(err)
			}
			if len(sig) != 2*c.Size() {
				t.Fatalf("signature length %d", len(sig))
			}
			if err := Verify(priv.Public(), digest[:], sig); err != nil {
				t.Fatal(err)
			}
			bad := bytes.Clone(sig)
			bad[len(bad)-1] ^= 1
			if err := Verify(priv.Public(), digest[:], bad); !errors.Is(err, ErrBadSignature) {
				t.Fatalf("tampered signature: %v", err)
			}
			other := Streebog256([]byte("amount=100.01"))
			if err := Verify(priv.Public(), other[:], sig); !errors.Is(err, ErrBadSignature) {
				t.Fatalf("other digest: %v", err)
			}
			if err := Verify(priv.Public(), digest[:], sig[:len(sig)-1]); !errors.Is(err, ErrBadSignature) {
				t.Fatalf("short signature: %v", err)
			}
			raw := MarshalPublicKeyRaw(priv.Public())
			pub, err := ParsePublicKeyRaw(c, raw)
			if err != nil || !pub.Equal(priv.Public()) {
				t.Fatalf("raw public key round trip: %v", err)
			}
			raw[0] ^= 1
			if _, err := ParsePublicKeyRaw(c, raw); !errors.Is(err, ErrInvalidKey) {
				t.Fatalf("off-curve point accepted: %v", err)
			}
		})
	}
}

func BenchmarkVerify256(b *testing.B) {
	priv, err := GenerateKey(TC26256A, rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	digest := Streebog256([]byte("benchmark"))
	sig, err := Sign(priv, digest[:], rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := Verify(priv.Public(), digest[:], sig); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerify512 is BenchmarkVerify256 on the 512-bit tc26 A curve.
func BenchmarkVerify512(b *testing.B) {
	priv, err := GenerateKey(TC26512A, rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	digest := Streebog512([]byte("benchmark"))
	sig, err := Sign(priv, digest[:], rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := Verify(priv.Public(), digest[:], sig); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSign256(b *testing.B) {
	priv, err := GenerateKey(TC26256A, rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	digest := Streebog256([]byte("benchmark"))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Sign(priv, digest[:], rand.Reader); err != nil {
			b.Fatal(err)
		}
	}
}

// affineMult is a deliberately simple affine double-and-add on math/big, a
// reference for the Montgomery/Jacobian code.
func affineMult(c *Params, x, y, k *big.Int) (*big.Int, *big.Int) {
	var rx, ry *big.Int // nil: infinity
	addPts := func(x1, y1, x2, y2 *big.Int) (*big.Int, *big.Int) {
		if x1 == nil {
			return x2, y2
		}
		if x2 == nil {
			return x1, y1
		}
		var l *big.Int
		if x1.Cmp(x2) == 0 {
			if new(big.Int).Add(y1, y2).Mod(new(big.Int).Add(y1, y2), c.P).Sign() == 0 {
				return nil, nil
			}
			num := new(big.Int).Mul(x1, x1)
			num.Mul(num, big.NewInt(3)).Add(num, c.A)
			den := new(big.Int).Lsh(y1, 1)
			l = num.Mul(num, den.ModInverse(den, c.P))
		} else {
			num := new(big.Int).Sub(y2, y1)
			den := new(big.Int).Sub(x2, x1)
			den.Mod(den, c.P)
			l = num.Mul(num, den.ModInverse(den, c.P))
		}
		l.Mod(l, c.P)
		x3 := new(big.Int).Mul(l, l)
		x3.Sub(x3, x1).Sub(x3, x2).Mod(x3, c.P)
		y3 := new(big.Int).Sub(x1, x3)
		y3.Mul(y3, l).Sub(y3, y1).Mod(y3, c.P)
		return x3, y3
	}
	for i := k.BitLen() - 1; i >= 0; i-- {
		rx, ry = addPts(rx, ry, rx, ry)
		if k.Bit(i) == 1 {
			rx, ry = addPts(rx, ry, x, y)
		}
	}
	return rx, ry
}

func TestScalarMultMatchesReference(t *testing.T) {
	for _, c := range []*Params{TC26256A, CryptoProB, TC26512B} {
		for i := 0; i < 3; i++ {
			k, err := randScalar(c, rand.Reader)
			if err != nil {
				t.Fatal(err)
			}
			wx, wy := affineMult(c, c.X, c.Y, k)
			gx, gy, ok := c.toAffine(c.scalarMult(c.X, c.Y, k))
			if !ok || gx.Cmp(wx) != 0 || gy.Cmp(wy) != 0 {
				t.Fatalf("%s: scalarMult differs from reference for k=%x", c.Name, k)
			}
			k2, _ := randScalar(c, rand.Reader)
			qx, qy := affineMult(c, c.X, c.Y, big.NewInt(12345))
			sx, sy := affineMult(c, qx, qy, k2)
			tx, ty, ok := c.toAffine(c.twinMult(c.X, c.Y, k, qx, qy, k2))
			ex, ey := affineAdd(c, wx, wy, sx, sy)
			if !ok || tx.Cmp(ex) != 0 || ty.Cmp(ey) != 0 {
				t.Fatalf("%s: twinMult differs from reference", c.Name)
			}
		}
	}
}

// affineAdd adds two distinct, non-opposite affine points.
func affineAdd(c *Params, x1, y1, x2, y2 *big.Int) (*big.Int, *big.Int) {
	num := new(big.Int).Sub(y2, y1)
	den := new(big.Int).Sub(x2, x1)
	den.Mod(den, c.P)
	l := num.Mul(num, den.ModInverse(den, c.P))
	l.Mod(l, c.P)
	x3 := new(big.Int).Mul(l, l)
	x3.Sub(x3, x1).Sub(x3, x2).Mod(x3, c.P)
	y3 := new(big.Int).Sub(x1, x3)
	y3.Mul(y3, l).Sub(y3, y1).Mod(y3, c.P)
	return x3, y3
}

// TestDoubleMinus3MatchesGeneral checks the a = −3 doubling against the
// general formulas on every curve with a = p − 3, from points with Z ≠ 1
// (multiples reached through additions), and that the curves expected to
// take it do.
func TestDoubleMinus3MatchesGeneral(t *testing.T) {
	minus3 := 0
	for _, c := range []*Params{TC26256A, TC26256B, TC26256C, TC26256D, CryptoProA, CryptoProB, CryptoProC, TC26512A, TC26512B, TC26512C} {
		ca := c.arith()
		if !ca.aMinus3 {
			continue
		}
		minus3++
		for i := 0; i < 20; i++ {
			k, err := randScalar(c, rand.Reader)
			if err != nil {
				t.Fatal(err)
			}
			p := c.scalarMult(c.X, c.Y, k)
			var fast, general point
			ca.doubleMinus3(&fast, &p)
			ca.doubleGeneral(&general, &p)
			fx, fy, ok1 := c.toAffine(fast)
			gx, gy, ok2 := c.toAffine(general)
			if ok1 != ok2 || fx.Cmp(gx) != 0 || fy.Cmp(gy) != 0 {
				t.Fatalf("%s: a = −3 doubling differs from the general one", c.Name)
			}
		}
	}
	if minus3 < 5 {
		t.Fatalf("only %d curves take the a = −3 doubling; the CryptoPro sets and 512-bit A/B should", minus3)
	}
}

// BenchmarkVerifyDoubleSideBySide verifies on CryptoPro-A (a = −3) with the
// a = −3 doubling and with the general one, alternating, and reports the
// general ÷ fast time.
func BenchmarkVerifyDoubleSideBySide(b *testing.B) {
	priv, err := GenerateKey(CryptoProA, rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	digest := Streebog256([]byte("benchmark"))
	sig, err := Sign(priv, digest[:], rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	ca := CryptoProA.arith()
	defer func() { ca.aMinus3 = true }()
	var fast, general time.Duration
	for b.Loop() {
		for _, m3 := range []bool{true, false} {
			ca.aMinus3 = m3
			t0 := time.Now()
			if err := Verify(priv.Public(), digest[:], sig); err != nil {
				b.Fatal(err)
			}
			if m3 {
				fast += time.Since(t0)
			} else {
				general += time.Since(t0)
			}
		}
	}
	b.ReportMetric(float64(fast.Nanoseconds())/float64(b.N), "ns-a-3")
	b.ReportMetric(float64(general.Nanoseconds())/float64(b.N), "ns-general")
	b.ReportMetric(float64(general)/float64(fast), "general÷a-3")
}

// TestScalarMulAddMatchesBig holds the constant-time s = (r·d + k·e) mod q
// of signing to math/big's result on every parameter set, for the edge
// operands 0, 1, q−1 and random ones, and checks it refuses operands that
// are not below q.
func TestScalarMulAddMatchesBig(t *testing.T) {
	r := mrand.New(mrand.NewPCG(5, 6))
	for _, c := range AllParams {
		t.Run(c.Name, func(t *testing.T) {
			qm1 := new(big.Int).Sub(c.Q, big.NewInt(1))
			vals := []*big.Int{big.NewInt(0), big.NewInt(1), qm1}
			for range 20 {
				buf := make([]byte, c.size)
				for i := range buf {
					buf[i] = byte(r.Uint32())
				}
				vals = append(vals, new(big.Int).Mod(new(big.Int).SetBytes(buf), c.Q))
			}
			for i, a := range vals {
				b, k, e := vals[(i+1)%len(vals)], vals[(i+5)%len(vals)], vals[(i+11)%len(vals)]
				want := new(big.Int).Mul(a, b)
				want.Add(want, new(big.Int).Mul(k, e)).Mod(want, c.Q)
				got, ok := scalarMulAdd(c, a, b, k, e)
				if !ok || got.Cmp(want) != 0 {
					t.Fatalf("(%x·%x + %x·%x) mod q = %x, %v; want %x", a, b, k, e, got, ok, want)
				}
			}
			if _, ok := scalarMulAdd(c, c.Q, big.NewInt(1), big.NewInt(1), big.NewInt(1)); ok {
				t.Fatal("an operand equal to q was accepted")
			}
		})
	}
}
