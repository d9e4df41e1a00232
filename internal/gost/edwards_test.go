package gost

import (
	"math/big"
	"testing"
)

// edwardsCurves are the parameter sets with a twisted Edwards form, with
// d and the base point (u, v) from RFC 7836 appendix A.2.
var edwardsCurves = []struct {
	params  *Params
	d, u, v string
}{
	{TC26256A, "0605F6B7C183FA81578BC39CFAD518132B9DF62897009AF7E522C32D6DC7BFFB", "0D",
		"60CA1E32AA475B348488C38FAB07649CE7EF8DBE87F22E81F92B2592DBA300E7"},
	{TC26512C, "9E4F5D8C017D8D9F13A5CF3CDF5BFE4DAB402D54198E31EBDE28A0621050439CA6B39E0A515C06B304E2CE43E79E369E91A0CFC2BC2A22B4CA302DBB33EE7550", "12",
		"469AF79D1FB1F5E16B99592B77A01E2A0FDFB0D01794368D9A56117F7B38669522DD4B650CF789EEBF068C5D139732F0905622C04B2BAAE7600303EE73001A3D"},
}

// TestEdwardsFormMatchesRFC7836 checks that the derived Edwards form is the
// RFC's (same d, G maps to the RFC's (u, v)) and that only these two curves
// take the Edwards path.
func TestEdwardsFormMatchesRFC7836(t *testing.T) {
	for _, ec := range edwardsCurves {
		c := ec.params
		ca := c.arith()
		f := ca.f
		if ca.ed == nil {
			t.Fatalf("%s: no Edwards form found", c.Name)
		}
		if got := f.fromMont(&ca.ed.d); got.Cmp(hexBig(t, ec.d)) != 0 {
			t.Fatalf("%s: d = %x, want %s", c.Name, got, ec.d)
		}
		g, ok := ca.edFromWeierstrass(&ca.gx, &ca.gy)
		if !ok {
			t.Fatalf("%s: G has no Edwards image", c.Name)
		}
		var zinv, u, v fe
		f.inv(&zinv, &g.z)
		f.mul(&u, &g.x, &zinv)
		f.mul(&v, &g.y, &zinv)
		if f.fromMont(&u).Cmp(hexBig(t, ec.u)) != 0 || f.fromMont(&v).Cmp(hexBig(t, ec.v)) != 0 {
			t.Fatalf("%s: G maps to (%x, %x)", c.Name, f.fromMont(&u), f.fromMont(&v))
		}
	}
	for _, c := range AllParams {
		if c != TC26256A && c != TC26512C && c.arith().ed != nil {
			t.Fatalf("%s: unexpected Edwards form", c.Name)
		}
	}
}

// TestEdwardsMapRoundTrip maps random points to the Edwards form and back.
func TestEdwardsMapRoundTrip(t *testing.T) {
	for _, ec := range edwardsCurves {
		c := ec.params
		ca := c.arith()
		for _, k := range randomScalars(t, c, 10) {
			x, y, _ := c.toAffine(c.scalarMult(c.X, c.Y, k))
			e, ok := ca.edFromWeierstrass(ptr(ca.f.toMont(x)), ptr(ca.f.toMont(y)))
			if !ok {
				t.Fatalf("%s: no Edwards image for %x", c.Name, k)
			}
			gx, gy, ok := c.toAffine(ca.edToJacobian(&e))
			if !ok || gx.Cmp(x) != 0 || gy.Cmp(y) != 0 {
				t.Fatalf("%s: round trip of %x·G fails", c.Name, k)
			}
		}
	}
}

func ptr(v fe) *fe { return &v }

// TestVerifyMultEdwardsOutsideSubgroup feeds public points outside the
// order-q subgroup, which IsOnCurve accepts: Q + T2 with T2 = (t, 0) of
// order 2, whose sums land on T2 (the Edwards (0, −1)) or infinity; T2
// itself, which has no Edwards image and takes the Jacobian code; and the
// order-4 points (s + t, ±s). Results must match the reference.
func TestVerifyMultEdwardsOutsideSubgroup(t *testing.T) {
	for _, ec := range edwardsCurves {
		c := ec.params
		ca := c.arith()
		f := ca.f
		s, tt := f.fromMont(&ca.ed.s), f.fromMont(&ca.ed.t)
		t2x, t2y := tt, big.NewInt(0)
		t4x := new(big.Int).Mod(new(big.Int).Add(s, tt), c.P)
		for _, pt := range [][2]*big.Int{{t2x, t2y}, {t4x, s}, {t4x, new(big.Int).Sub(c.P, s)}} {
			if !c.IsOnCurve(pt[0], pt[1]) {
				t.Fatalf("%s: small-order point (%x, %x) not on the curve", c.Name, pt[0], pt[1])
			}
		}
		d := randomScalars(t, c, 1)[0]
		qx, qy := affineMult(c, c.X, c.Y, d)
		shiftedX, shiftedY := affineAdd(c, qx, qy, t2x, t2y)
		k2s := append(randomScalars(t, c, 2), big.NewInt(1), big.NewInt(2))
		for _, pub := range []struct {
			name string
			x, y *big.Int
			d    *big.Int // discrete log of the subgroup part, if any
		}{
			{"Q+T2", shiftedX, shiftedY, d},
			{"T2", t2x, t2y, nil},
			{"T4", t4x, s, nil},
		} {
			mx, my := f.toMont(pub.x), f.toMont(pub.y)
			for _, k2 := range k2s {
				k1s := []*big.Int{big.NewInt(0), big.NewInt(1)}
				if pub.d != nil {
					// k1 = −k2·d cancels the subgroup part.
					k1 := new(big.Int).Mul(k2, pub.d)
					k1s = append(k1s, k1.Neg(k1).Mod(k1, c.Q))
				}
				for _, k1 := range k1s {
					l1, l2 := limbsFromBig(k1, f.n), limbsFromBig(k2, f.n)
					got := ca.verifyMult(&l1, &l2, &mx, &my)
					want := c.twinMult(c.X, c.Y, k1, pub.x, pub.y, k2)
					if !sameAffine(c, got, want) {
						t.Fatalf("%s %s k1=%x k2=%x: differs from the reference", c.Name, pub.name, k1, k2)
					}
				}
			}
		}
	}
}
