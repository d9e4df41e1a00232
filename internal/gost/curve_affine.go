package gost

// Affine points, mixed additions and batch conversion to affine form.
// Precomputed tables store affine points because adding an affine point to a
// Jacobian one ("madd-2007-bl", 7M + 4S) is five multiplications cheaper
// than a general Jacobian addition, and converting a whole table costs one
// inversion in total.

// affineTable holds affine points as a flat slice: point i is x in limbs
// [2ni, 2ni+n) and y in [2ni+n, 2ni+2n). Storing only n limbs per
// coordinate halves the memory (and the bytes a constant-time scan reads)
// for 256-bit curves compared with full fe values.
type affineTable struct {
	n      int
	points []uint64
}

// load copies point i into x and y.
func (t *affineTable) load(x, y *fe, i int) {
	base := 2 * t.n * i
	copy(x[:t.n], t.points[base:base+t.n])
	copy(y[:t.n], t.points[base+t.n:base+2*t.n])
}

// selectConstantTime sets x, y to point first+idx−1 of the table, reading
// every point in [first, first+count) so that the memory access pattern does
// not depend on idx; idx = 0 selects nothing and leaves x and y zero.
func (t *affineTable) selectConstantTime(x, y *fe, first, count int, idx uint64) {
	*x, *y = fe{}, fe{}
	n := t.n
	for j := 0; j < count; j++ {
		// mask is all ones when j+1 == idx: (v−1)>>63 is 1 only for v = 0.
		v := uint64(j+1) ^ idx
		mask := -((v - 1) >> 63)
		base := 2 * n * (first + j)
		row := t.points[base : base+2*n]
		for l := 0; l < n; l++ {
			x[l] |= row[l] & mask
			y[l] |= row[n+l] & mask
		}
	}
}

// madd sets r = p + (qx, qy), where the second point is affine (never
// infinity), in variable time.
func (ca *curveArith) madd(r, p *point, qx, qy *fe) {
	if ca.f.isZero(&p.z) {
		r.x, r.y, r.z = *qx, *qy, ca.f.one
		return
	}
	ca.maddJacobian(r, p, qx, qy)
}

// maddJacobian is madd for p not at infinity: "madd-2007-bl". When p is at
// infinity it returns garbage without branching, which the constant-time
// base-point multiplication masks away. It branches only when p = ±q, which
// random scalars reach with negligible probability.
func (ca *curveArith) maddJacobian(r, p *point, qx, qy *fe) {
	f := ca.f
	var z1z1, u2, s2, h, hh, i, j, rr, v, t, x3, y3, z3 fe
	f.sqr(&z1z1, &p.z)
	f.mul(&u2, qx, &z1z1)
	f.mul(&t, &p.z, &z1z1)
	f.mul(&s2, qy, &t)
	f.sub(&h, &u2, &p.x)
	f.sub(&rr, &s2, &p.y)
	if f.isZero(&h) {
		if f.isZero(&rr) {
			q := point{x: *qx, y: *qy, z: f.one}
			ca.double(r, &q)
			return
		}
		*r = point{}
		return
	}
	f.add(&rr, &rr, &rr)
	f.sqr(&hh, &h)
	f.add(&i, &hh, &hh)
	f.add(&i, &i, &i)
	f.mul(&j, &h, &i)
	f.mul(&v, &p.x, &i)
	// X3 = r² − J − 2V
	f.sqr(&x3, &rr)
	f.sub(&x3, &x3, &j)
	f.sub(&x3, &x3, &v)
	f.sub(&x3, &x3, &v)
	// Y3 = r·(V − X3) − 2·Y1·J
	f.sub(&t, &v, &x3)
	f.mul(&y3, &rr, &t)
	f.mul(&t, &p.y, &j)
	f.add(&t, &t, &t)
	f.sub(&y3, &y3, &t)
	// Z3 = 2·Z1·H: with squaring no cheaper than multiplication here, this
	// beats (Z1 + H)² − Z1Z1 − HH by two subtractions.
	f.mul(&z3, &p.z, &h)
	f.add(&z3, &z3, &z3)
	r.x, r.y, r.z = x3, y3, z3
}

// toAffineTable converts Jacobian points, none at infinity, to an affine
// table with Montgomery's trick: one inversion and three multiplications per
// point instead of an inversion each.
func (ca *curveArith) toAffineTable(pts []point) *affineTable {
	f := ca.f
	n := f.n
	prefix := make([]fe, len(pts))
	acc := f.one
	for i := range pts {
		f.mul(&acc, &acc, &pts[i].z)
		prefix[i] = acc
	}
	var inv fe
	f.inv(&inv, &acc)
	t := &affineTable{n: n, points: make([]uint64, 2*n*len(pts))}
	for i := len(pts) - 1; i >= 0; i-- {
		// inv is (z0·…·zi)⁻¹; times the prefix up to i−1 it is zi⁻¹.
		var zinv, zinv2, x, y fe
		if i > 0 {
			f.mul(&zinv, &inv, &prefix[i-1])
			f.mul(&inv, &inv, &pts[i].z)
		} else {
			zinv = inv
		}
		f.sqr(&zinv2, &zinv)
		f.mul(&x, &pts[i].x, &zinv2)
		f.mul(&zinv2, &zinv2, &zinv)
		f.mul(&y, &pts[i].y, &zinv2)
		base := 2 * n * i
		copy(t.points[base:base+n], x[:n])
		copy(t.points[base+n:base+2*n], y[:n])
	}
	return t
}

// selectFe sets z = a where mask is all ones and z = b where it is zero.
func (f *montField) selectFe(z, a, b *fe, mask uint64) {
	for l := 0; l < f.n; l++ {
		z[l] = a[l]&mask | b[l]&^mask
	}
}

// zeroMask returns all ones if x is zero and zero otherwise, without a
// branch.
func (f *montField) zeroMask(x *fe) uint64 {
	var acc uint64
	for l := 0; l < f.n; l++ {
		acc |= x[l]
	}
	// acc | −acc has the top bit set exactly when acc ≠ 0.
	return ((acc | -acc) >> 63) - 1
}
