package gost

import "math/big"

// Verification computes k1·G + k2·Q for public scalars, so it may run in
// variable time. Both scalars are written in width-w non-adjacent form
// (wNAF: odd digits, each followed by at least w−1 zeros) and share one
// chain of doublings. G's digits use a wide window against a table of 64
// affine odd multiples built once per curve, so its additions are few and
// mixed; Q's use width 5 against 8 odd multiples computed per call in
// Jacobian form. For a 256-bit curve this is about 256 doublings, 43 full
// and 28 mixed additions, against 256 doublings and 120 full additions for
// Shamir's trick with 2-bit windows.

const (
	// baseWNAFBits is the wNAF width for G: digits up to ±127, table of
	// 64 affine points.
	baseWNAFBits = 8
	// keyWNAFBits is the wNAF width for the public key: digits up to ±15,
	// 8 Jacobian points per verification.
	keyWNAFBits = 5
)

// wnafDigits writes the width-w NAF of k into out (one digit per bit
// position, low first) and returns the number of positions written. out
// must hold at least 64·maxLimbs+1 entries.
func wnafDigits(out []int8, k *fe, nbits, w int) int {
	length := nbits + 1
	clear(out[:length])
	carry := 0
	for bit := 0; bit < length; {
		if int(bitsAt(k, bit, 1)) == carry {
			bit++
			continue
		}
		now := w
		if now > length-bit {
			now = length - bit
		}
		word := int(bitsAt(k, bit, now)) + carry
		carry = word >> (w - 1) & 1
		word -= carry << w
		out[bit] = int8(word)
		bit += now
	}
	return length
}

// baseOddMultiples returns G, 3G, …, 127G as an affine table, built on
// first use.
func (ca *curveArith) baseOddMultiples() *affineTable {
	ca.baseOddOnce.Do(func() {
		g := ca.affinePoint(&ca.gx, &ca.gy)
		ca.baseOdd = ca.toAffineTable(ca.oddMultiples(&g, 1<<(baseWNAFBits-2)))
	})
	return ca.baseOdd
}

// oddMultiples returns p, 3p, 5p, … (count points) in Jacobian form.
func (ca *curveArith) oddMultiples(p *point, count int) []point {
	pts := make([]point, count)
	pts[0] = *p
	var twice point
	ca.double(&twice, p)
	for i := 1; i < count; i++ {
		ca.add(&pts[i], &pts[i-1], &twice)
	}
	return pts
}

// modifiedJacobian is a Jacobian point with T = a·Z⁴ alongside, which makes
// doubling on curves with general a cost 3M + 5S, as much as the a = −3
// formulas, instead of 2M + 8S. T is recomputed (2S + 1M) only before a
// doubling that follows an addition.
type modifiedJacobian struct {
	point
	t      fe
	tValid bool
}

// doubleInPlace doubles acc with the cheapest formulas for the curve.
func (ca *curveArith) doubleInPlace(acc *modifiedJacobian) {
	if ca.aMinus3 {
		ca.doubleMinus3(&acc.point, &acc.point)
		return
	}
	f := ca.f
	if f.isZero(&acc.z) || f.isZero(&acc.y) {
		acc.point = point{}
		acc.tValid = false
		return
	}
	if !acc.tValid {
		f.sqr(&acc.t, &acc.z)
		f.sqr(&acc.t, &acc.t)
		f.mul(&acc.t, &acc.t, &ca.a)
	}
	// XX = X², A = 2Y², AA = A², U = 2AA, S = (X + A)² − XX − AA,
	// M = 3XX + T, X3 = M² − 2S, Y3 = M·(S − X3) − U, Z3 = 2YZ, T3 = 2UT.
	var xx, a, aa, u, s, m, x3, y3, z3 fe
	f.sqr(&xx, &acc.x)
	f.sqr(&a, &acc.y)
	f.add(&a, &a, &a)
	f.sqr(&aa, &a)
	f.add(&u, &aa, &aa)
	f.add(&s, &acc.x, &a)
	f.sqr(&s, &s)
	f.sub(&s, &s, &xx)
	f.sub(&s, &s, &aa)
	f.add(&m, &xx, &xx)
	f.add(&m, &m, &xx)
	f.add(&m, &m, &acc.t)
	f.sqr(&x3, &m)
	f.sub(&x3, &x3, &s)
	f.sub(&x3, &x3, &s)
	f.sub(&y3, &s, &x3)
	f.mul(&y3, &y3, &m)
	f.sub(&y3, &y3, &u)
	f.mul(&z3, &acc.y, &acc.z)
	f.add(&z3, &z3, &z3)
	f.mul(&acc.t, &acc.t, &u)
	f.add(&acc.t, &acc.t, &acc.t)
	acc.x, acc.y, acc.z = x3, y3, z3
	acc.tValid = true
}

// verifyMult returns k1·G + k2·(qx, qy) for k1, k2 < 2^(64n) in variable
// time. (qx, qy) must be a point on the curve in Montgomery form. Curves
// with a twisted Edwards form compute there (edwards.go).
func (ca *curveArith) verifyMult(k1, k2 *fe, qx, qy *fe) point {
	if ca.ed != nil {
		if sum, ok := ca.verifyMultEdwards(k1, k2, qx, qy); ok {
			return sum
		}
	}
	return ca.verifyMultJacobian(k1, k2, qx, qy)
}

// verifyMultJacobian is verifyMult in Jacobian coordinates.
func (ca *curveArith) verifyMultJacobian(k1, k2 *fe, qx, qy *fe) point {
	f := ca.f
	gTable := ca.baseOddMultiples()
	q := ca.affinePoint(qx, qy)
	qTable := ca.oddMultiples(&q, 1<<(keyWNAFBits-2))

	var d1, d2 [64*maxLimbs + 1]int8
	n1 := wnafDigits(d1[:], k1, 64*f.n, baseWNAFBits)
	wnafDigits(d2[:], k2, 64*f.n, keyWNAFBits)
	top := n1 - 1
	for top >= 0 && d1[top] == 0 && d2[top] == 0 {
		top--
	}

	var acc modifiedJacobian
	var zero, tx, ty fe
	for i := top; i >= 0; i-- {
		ca.doubleInPlace(&acc)
		if d := d1[i]; d != 0 {
			idx := int(d)
			if idx < 0 {
				idx = -idx
			}
			gTable.load(&tx, &ty, idx>>1)
			if d < 0 {
				f.sub(&ty, &zero, &ty)
			}
			ca.madd(&acc.point, &acc.point, &tx, &ty)
			acc.tValid = false
		}
		if d := d2[i]; d != 0 {
			if d > 0 {
				ca.add(&acc.point, &acc.point, &qTable[d>>1])
			} else {
				neg := qTable[(-d)>>1]
				f.sub(&neg.y, &zero, &neg.y)
				ca.add(&acc.point, &acc.point, &neg)
			}
			acc.tValid = false
		}
	}
	return acc.point
}

// xCoordinateModQIs reports whether the affine x of the Jacobian point p,
// reduced mod q, equals r (0 < r < q), without the inversion toAffine would
// need: x ≡ r (mod q) with x < p means x = r + jq for some j ≥ 0 with
// r + jq < p, and x = X/Z² is checked as X = (r + jq)·Z² in the field.
func (ca *curveArith) xCoordinateModQIs(p *point, r *big.Int) bool {
	f := ca.f
	if f.isZero(&p.z) {
		return false
	}
	var zz, cand, lhs fe
	f.sqr(&zz, &p.z)
	c := new(big.Int).Set(r)
	for c.Cmp(f.pBig) < 0 {
		cand = f.toMont(c)
		f.mul(&lhs, &cand, &zz)
		if f.equal(&lhs, &p.x) {
			return true
		}
		c.Add(c, ca.q)
	}
	return false
}
