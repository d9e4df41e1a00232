package gost

import "math/big"

// Fixed-base multiplication k·G for signing and key generation. The scalar
// is cut into signed 5-bit windows (Booth recoding, digits −16..16), and a
// table built once per curve holds j·2^(5i)·G for every window i and
// j = 1..16 as affine points, so k·G is one mixed addition per window and no
// doublings: 52 additions for a 256-bit curve instead of the 256 doublings
// and 64 additions of a plain 4-bit window.
//
// The scalar here is the secret nonce or key, so the loop does the same work
// for every digit: each table lookup reads all 16 entries of its window with
// masked selects, negation and the zero digit are masked selects, and the
// point at infinity is handled by masks rather than branches. Only the
// addition of two equal points branches, which a random scalar reaches with
// negligible probability.

// baseWindowBits is the window width; 16 points per window.
const baseWindowBits = 5

const baseWindowPoints = 1 << (baseWindowBits - 1)

// baseWindows returns how many windows cover scalars below q: Booth
// recoding reads one bit past each window, so the top window must leave the
// scalar's top bit below its own top bit.
func baseWindows(q *big.Int) int {
	return (q.BitLen() + baseWindowBits) / baseWindowBits
}

// basePointTable returns the fixed-base table of the curve, building it on
// first use.
func (ca *curveArith) basePointTable() *affineTable {
	ca.baseOnce.Do(func() { ca.base = ca.buildBasePointTable() })
	return ca.base
}

func (ca *curveArith) buildBasePointTable() *affineTable {
	windows := baseWindows(ca.q)
	pts := make([]point, 0, windows*baseWindowPoints)
	start := ca.affinePoint(&ca.gx, &ca.gy) // 2^(5i)·G for the current window
	for i := 0; i < windows; i++ {
		row := len(pts)
		pts = append(pts, start)
		var p point
		ca.double(&p, &start)
		pts = append(pts, p)
		for j := 3; j <= baseWindowPoints; j++ {
			ca.add(&p, &pts[len(pts)-1], &start)
			pts = append(pts, p)
		}
		// 2^(5(i+1))·G = 2·(16·2^(5i)·G).
		ca.double(&start, &pts[row+baseWindowPoints-1])
	}
	return ca.toAffineTable(pts)
}

// boothDigit returns the signed digit of window i of k: its magnitude 0..16
// and 1 if it is negative. The window reads bits 5i−1 … 5i+4; the
// computation is branch-free (the recoding of crypto/elliptic's P-256).
func boothDigit(k *fe, i int) (abs, neg uint64) {
	var in uint64
	if i == 0 {
		in = k[0] << 1 & 0x3f
	} else {
		in = bitsAt(k, baseWindowBits*i-1, baseWindowBits+1)
	}
	s := ^((in >> baseWindowBits) - 1) // all ones when the top bit is set
	d := (1 << (baseWindowBits + 1)) - in - 1
	d = d&s | in&^s
	d = d>>1 + d&1
	return d, s & 1
}

// bitsAt returns count (at most 32) bits of k starting at bit pos; bits
// past the end of k read as zero.
func bitsAt(k *fe, pos, count int) uint64 {
	limb, off := pos/64, uint(pos%64)
	if limb >= maxLimbs {
		return 0
	}
	v := k[limb] >> off
	if off+uint(count) > 64 && limb+1 < maxLimbs {
		v |= k[limb+1] << (64 - off)
	}
	return v & (1<<uint(count) - 1)
}

// scalarBaseMult returns k·G for 0 ≤ k < q with the fixed-base table, doing
// the same sequence of field operations and memory reads for every k of
// the curve's size.
func (c *Params) scalarBaseMult(k *big.Int) point {
	ca := c.arith()
	f := ca.f
	table := ca.basePointTable()
	if k.Sign() < 0 || k.Cmp(c.Q) >= 0 {
		k = new(big.Int).Mod(k, c.Q)
	}
	scalar := limbsFromBig(k, f.n)
	// The accumulator starts at infinity, written (1, 1, 0) rather than
	// all zeros so that adding to it does not look like adding a point to
	// itself.
	acc := point{x: f.one, y: f.one, z: fe{}}
	var zero fe
	for i := 0; i < baseWindows(c.Q); i++ {
		d, neg := boothDigit(&scalar, i)
		isZeroDigit := ((d | -d) >> 63) - 1
		// A zero digit adds entry 1 and discards the sum, so the work does
		// not change.
		var tx, ty, negY fe
		table.selectConstantTime(&tx, &ty, i*baseWindowPoints, baseWindowPoints, d|isZeroDigit&1)
		f.sub(&negY, &zero, &ty)
		f.selectFe(&ty, &negY, &ty, -neg)

		var sum point
		ca.maddJacobian(&sum, &acc, &tx, &ty)
		accInf := f.zeroMask(&acc.z)
		f.selectFe(&sum.x, &tx, &sum.x, accInf)
		f.selectFe(&sum.y, &ty, &sum.y, accInf)
		f.selectFe(&sum.z, &f.one, &sum.z, accInf)
		f.selectFe(&acc.x, &acc.x, &sum.x, isZeroDigit)
		f.selectFe(&acc.y, &acc.y, &sum.y, isZeroDigit)
		f.selectFe(&acc.z, &acc.z, &sum.z, isZeroDigit)
	}
	return acc
}
