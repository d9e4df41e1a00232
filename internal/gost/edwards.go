package gost

import "math/big"

// Verification on the twisted Edwards form. RFC 7836 defines tc26 256 A and
// 512 C as twisted Edwards curves e·u² + v² = 1 + d·u²v² with e = 1, and
// signatures over their Weierstrass equivalents. Their Weierstrass a is not
// −3, so Jacobian doubling costs 8 multiplications and 14 additions; in
// extended Edwards coordinates (X : Y : Z : T), u = X/Z, v = Y/Z, T = XY/Z,
// doubling costs 7 multiplications (8 when T is needed) and 7 additions,
// and adding a table point 7 or 8 multiplications instead of 11 or 16.
// With d a non-square the formulas are complete: no case needs a branch,
// not even the neutral element (0, 1).
//
// The maps (RFC 7836 section 5), with s = (e − d)/4 and t = (e + d)/6:
// x = s(1 + v)/(1 − v) + t, y = s(1 + v)/((1 − v)u), and back
// u = (x − t)/y, v = (x − t − s)/(x − t + s).

// edwardsForm holds d, s and t in Montgomery form.
type edwardsForm struct {
	d, s, t fe
}

// newEdwardsForm returns the e = 1 twisted Edwards form of the curve
// y² = x³ + ax + b over f, or nil if it has none with d a non-square. With
// e = 1 the relation a = s² − 3t² becomes d² + 14d + 1 + 48a = 0, whose
// roots are tried against b = 2t³ − t·s².
func newEdwardsForm(f *montField, a, b *big.Int) *edwardsForm {
	p := f.pBig
	mod := func(v *big.Int) *big.Int { return v.Mod(v, p) }
	disc := mod(new(big.Int).Mul(big.NewInt(48), new(big.Int).Sub(big.NewInt(1), a)))
	root := new(big.Int).ModSqrt(disc, p)
	if root == nil {
		return nil
	}
	inv4 := new(big.Int).ModInverse(big.NewInt(4), p)
	inv6 := new(big.Int).ModInverse(big.NewInt(6), p)
	for _, r := range []*big.Int{root, new(big.Int).Sub(p, root)} {
		d := mod(new(big.Int).Sub(r, big.NewInt(7)))
		s := mod(new(big.Int).Mul(new(big.Int).Sub(big.NewInt(1), d), inv4))
		t := mod(new(big.Int).Mul(new(big.Int).Add(big.NewInt(1), d), inv6))
		ss := new(big.Int).Mul(s, s)
		wantB := new(big.Int).Mul(big.NewInt(2), new(big.Int).Exp(t, big.NewInt(3), p))
		wantB = mod(wantB.Sub(wantB, new(big.Int).Mul(t, ss)))
		if wantB.Cmp(mod(new(big.Int).Set(b))) == 0 && big.Jacobi(d, p) == -1 {
			return &edwardsForm{d: f.toMont(d), s: f.toMont(s), t: f.toMont(t)}
		}
	}
	return nil
}

// edPoint is a point in extended coordinates. t is only kept up to date
// where an addition follows; doubling does not read it.
type edPoint struct{ x, y, z, t fe }

// edCached is a point prepared for addition: besides X, Y, Z it holds
// Y + X, Y − X and d·T, so that adding the point or its negation (−u, v)
// needs no further preparation. Table points are affine (Z = 1, marked by
// affine), which saves a multiplication.
type edCached struct {
	x, y, z, sum, diff, dt fe
	affine                 bool
}

// edDouble sets r = 2p ("dbl-2008-hwcd" with a = 1), computing T only if
// withT.
func (ca *curveArith) edDouble(r, p *edPoint, withT bool) {
	f := ca.f
	var a, b, c, e, g, fv, h fe
	f.sqr(&a, &p.x)
	f.sqr(&b, &p.y)
	f.sqr(&c, &p.z)
	f.add(&c, &c, &c)
	f.add(&e, &p.x, &p.y)
	f.sqr(&e, &e)
	f.sub(&e, &e, &a)
	f.sub(&e, &e, &b)
	f.add(&g, &a, &b)
	f.sub(&fv, &g, &c)
	f.sub(&h, &a, &b)
	f.mul(&r.x, &e, &fv)
	f.mul(&r.y, &g, &h)
	f.mul(&r.z, &fv, &g)
	if withT {
		f.mul(&r.t, &e, &h)
	}
}

// edAdd sets r = p + q, or p − q if neg ("add-2008-hwcd" with a = 1),
// computing T only if withT. p.t must be current.
func (ca *curveArith) edAdd(r, p *edPoint, q *edCached, neg, withT bool) {
	f := ca.f
	var a, b, c, d, e, fv, g, h fe
	f.mul(&a, &p.x, &q.x)
	f.mul(&b, &p.y, &q.y)
	f.mul(&c, &p.t, &q.dt)
	if q.affine {
		d = p.z
	} else {
		f.mul(&d, &p.z, &q.z)
	}
	f.add(&e, &p.x, &p.y)
	// Negating q flips the signs of its u (so of A and C) and turns
	// Y + X into Y − X.
	if neg {
		f.mul(&e, &e, &q.diff)
		f.add(&e, &e, &a)
		f.sub(&e, &e, &b)
		f.add(&fv, &d, &c)
		f.sub(&g, &d, &c)
		f.add(&h, &b, &a)
	} else {
		f.mul(&e, &e, &q.sum)
		f.sub(&e, &e, &a)
		f.sub(&e, &e, &b)
		f.sub(&fv, &d, &c)
		f.add(&g, &d, &c)
		f.sub(&h, &b, &a)
	}
	f.mul(&r.x, &e, &fv)
	f.mul(&r.y, &g, &h)
	f.mul(&r.z, &fv, &g)
	if withT {
		f.mul(&r.t, &e, &h)
	}
}

// edCache prepares p (with current T) for addition.
func (ca *curveArith) edCache(q *edCached, p *edPoint) {
	f := ca.f
	q.x, q.y, q.z, q.affine = p.x, p.y, p.z, false
	f.add(&q.sum, &p.y, &p.x)
	f.sub(&q.diff, &p.y, &p.x)
	f.mul(&q.dt, &p.t, &ca.ed.d)
}

// edFromWeierstrass maps the affine Weierstrass point (x, y) to extended
// Edwards coordinates: with w = x − t, U = w(w + s), V = (w − s)·y and
// W = y(w + s), (u, v) = (U/W, V/W), so (X, Y, Z, T) = (UW, VW, W², UV).
// It fails (ok false) for the points the map leaves out: y = 0, the point
// of order 2, and x = t − s, which has no rational Edwards image.
func (ca *curveArith) edFromWeierstrass(x, y *fe) (p edPoint, ok bool) {
	f := ca.f
	var w, ws, u, v, den fe
	f.sub(&w, x, &ca.ed.t)
	f.add(&ws, &w, &ca.ed.s)
	f.mul(&u, &w, &ws)
	f.sub(&v, &w, &ca.ed.s)
	f.mul(&v, &v, y)
	f.mul(&den, y, &ws)
	if f.isZero(&den) {
		return edPoint{}, false
	}
	f.mul(&p.x, &u, &den)
	f.mul(&p.y, &v, &den)
	f.sqr(&p.z, &den)
	f.mul(&p.t, &u, &v)
	return p, true
}

// edToJacobian maps an Edwards point back to Weierstrass Jacobian
// coordinates. With N = s(Z + Y) + t(Z − Y), D = Z − Y, M = s(Z + Y)·Z and
// E = D·X the affine point is (N/D, M/E), which is (N·D·E², M·D³·E², D·E)
// in Jacobian form. The neutral element (0, 1) maps to infinity and
// (0, −1), of order 2, to (t, 0); every other point has X ≠ 0 and Y ≠ Z.
func (ca *curveArith) edToJacobian(p *edPoint) point {
	f := ca.f
	if f.isZero(&p.x) {
		if f.equal(&p.y, &p.z) {
			return point{}
		}
		return point{x: ca.ed.t, z: f.one}
	}
	var sum, dd, n, t, m, e, ee, r fe
	f.add(&sum, &p.z, &p.y)
	f.sub(&dd, &p.z, &p.y)
	f.mul(&sum, &sum, &ca.ed.s)
	f.mul(&t, &dd, &ca.ed.t)
	f.add(&n, &sum, &t)
	f.mul(&m, &sum, &p.z)
	f.mul(&e, &dd, &p.x)
	f.sqr(&ee, &e)
	var out point
	f.mul(&out.z, &dd, &e)
	f.mul(&out.x, &n, &dd)
	f.mul(&out.x, &out.x, &ee)
	f.sqr(&r, &dd)
	f.mul(&r, &r, &dd)
	f.mul(&out.y, &m, &r)
	f.mul(&out.y, &out.y, &ee)
	return out
}

// edBaseOddMultiples returns G, 3G, …, 127G on the Edwards form, affine and
// prepared for addition, built on first use.
func (ca *curveArith) edBaseOddMultiples() []edCached {
	ca.edBaseOnce.Do(func() {
		f := ca.f
		g, _ := ca.edFromWeierstrass(&ca.gx, &ca.gy)
		count := 1 << (baseWNAFBits - 2)
		pts := ca.edOddMultiples(&g, count)
		// One inversion for all Z (Montgomery's trick), then u = X/Z,
		// v = Y/Z and T = uv.
		prefix := make([]fe, count)
		acc := f.one
		for i := range pts {
			f.mul(&acc, &acc, &pts[i].z)
			prefix[i] = acc
		}
		var inv fe
		f.inv(&inv, &acc)
		table := make([]edCached, count)
		for i := count - 1; i >= 0; i-- {
			zinv := inv
			if i > 0 {
				f.mul(&zinv, &inv, &prefix[i-1])
				f.mul(&inv, &inv, &pts[i].z)
			}
			var p edPoint
			f.mul(&p.x, &pts[i].x, &zinv)
			f.mul(&p.y, &pts[i].y, &zinv)
			p.z = f.one
			f.mul(&p.t, &p.x, &p.y)
			ca.edCache(&table[i], &p)
			table[i].affine = true
		}
		ca.edBaseOdd = table
	})
	return ca.edBaseOdd
}

// edOddMultiples returns p, 3p, 5p, … (count points) as extended points
// with T current.
func (ca *curveArith) edOddMultiples(p *edPoint, count int) []edPoint {
	pts := make([]edPoint, count)
	pts[0] = *p
	var twice edPoint
	var twiceCached edCached
	ca.edDouble(&twice, p, true)
	ca.edCache(&twiceCached, &twice)
	for i := 1; i < count; i++ {
		ca.edAdd(&pts[i], &pts[i-1], &twiceCached, false, true)
	}
	return pts
}

// verifyMultEdwards is verifyMult on the Edwards form; ok is false when the
// public point has no Edwards image and the caller must use the Jacobian
// code.
func (ca *curveArith) verifyMultEdwards(k1, k2 *fe, qx, qy *fe) (sum point, ok bool) {
	q, ok := ca.edFromWeierstrass(qx, qy)
	if !ok {
		return point{}, false
	}
	gTable := ca.edBaseOddMultiples()
	qPoints := ca.edOddMultiples(&q, 1<<(keyWNAFBits-2))
	var qTable [1 << (keyWNAFBits - 2)]edCached
	for i := range qPoints {
		ca.edCache(&qTable[i], &qPoints[i])
	}

	f := ca.f
	var d1, d2 [64*maxLimbs + 1]int8
	n1 := wnafDigits(d1[:], k1, 64*f.n, baseWNAFBits)
	wnafDigits(d2[:], k2, 64*f.n, keyWNAFBits)
	top := n1 - 1
	for top >= 0 && d1[top] == 0 && d2[top] == 0 {
		top--
	}

	acc := edPoint{y: f.one, z: f.one} // the neutral element (0, 1)
	for i := top; i >= 0; i-- {
		g, h := d1[i], d2[i]
		ca.edDouble(&acc, &acc, g != 0 || h != 0)
		if g != 0 {
			ca.edAdd(&acc, &acc, &gTable[absInt8(g)>>1], g < 0, h != 0)
		}
		if h != 0 {
			ca.edAdd(&acc, &acc, &qTable[absInt8(h)>>1], h < 0, false)
		}
	}
	return ca.edToJacobian(&acc), true
}

func absInt8(v int8) int {
	if v < 0 {
		return -int(v)
	}
	return int(v)
}
