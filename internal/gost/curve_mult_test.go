package gost

import (
	"crypto/rand"
	"math/big"
	"testing"
	"time"
)

// sameAffine reports whether two Jacobian points are the same affine point
// (or both infinity).
func sameAffine(c *Params, a, b point) bool {
	ax, ay, aok := c.toAffine(a)
	bx, by, bok := c.toAffine(b)
	if aok != bok {
		return false
	}
	return !aok || ax.Cmp(bx) == 0 && ay.Cmp(by) == 0
}

// edgeScalars returns scalars that stress the recodings on curve c: zero,
// one, small values around window boundaries, the top of the range, powers
// of two at window edges, and values whose partial sums hit ±q or a table
// entry, where the additions meet infinity or equal points.
func edgeScalars(c *Params) []*big.Int {
	q := c.Q
	one := big.NewInt(1)
	ks := []*big.Int{}
	for _, v := range []int64{0, 1, 2, 3, 7, 15, 16, 17, 31, 32, 33, 63, 64, 127, 128, 129, 255, 1000} {
		ks = append(ks, big.NewInt(v))
	}
	ks = append(ks, new(big.Int).Sub(q, one), new(big.Int).Sub(q, big.NewInt(2)),
		new(big.Int).Rsh(new(big.Int).Add(q, one), 1), new(big.Int).Sub(q, big.NewInt(16)))
	windows := baseWindows(q)
	for _, i := range []int{1, 2, windows / 2, windows - 2, windows - 1} {
		pow := new(big.Int).Lsh(one, uint(baseWindowBits*i))
		for _, j := range []int64{1, 16} {
			v := new(big.Int).Mul(pow, big.NewInt(j))
			ks = append(ks, new(big.Int).Mod(v, q),
				new(big.Int).Mod(new(big.Int).Sub(v, one), q),
				new(big.Int).Mod(new(big.Int).Sub(v, q), q),
				new(big.Int).Mod(new(big.Int).Lsh(v, 1), q))
		}
	}
	return ks
}

func randomScalars(t testing.TB, c *Params, n int) []*big.Int {
	t.Helper()
	ks := make([]*big.Int, n)
	for i := range ks {
		k, err := randScalar(c, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		ks[i] = k
	}
	return ks
}

// TestScalarBaseMultMatchesReference compares the fixed-base table
// multiplication with the old 4-bit window one on every parameter set.
func TestScalarBaseMultMatchesReference(t *testing.T) {
	random := 8
	if testing.Short() {
		random = 2
	}
	for _, c := range AllParams {
		t.Run(c.Name, func(t *testing.T) {
			ks := append(edgeScalars(c), randomScalars(t, c, random)...)
			// Scalars at or above q reduce mod q.
			ks = append(ks, new(big.Int).Set(c.Q), new(big.Int).Add(c.Q, big.NewInt(5)))
			for _, k := range ks {
				if got, want := c.scalarBaseMult(k), c.scalarMult(c.X, c.Y, k); !sameAffine(c, got, want) {
					t.Fatalf("k = %x: fixed-base result differs from the reference", k)
				}
			}
		})
	}
}

// TestVerifyMultMatchesReference compares the wNAF twin multiplication with
// the old Shamir's-trick one on every parameter set, for a random public
// point and for Q = G, where sums reach infinity (k1 + k2 = q) and equal
// points (k1 = k2).
func TestVerifyMultMatchesReference(t *testing.T) {
	random := 6
	if testing.Short() {
		random = 2
	}
	for _, c := range AllParams {
		t.Run(c.Name, func(t *testing.T) {
			ca := c.arith()
			f := ca.f
			d := randomScalars(t, c, 1)[0]
			qx, qy, _ := c.toAffine(c.scalarMult(c.X, c.Y, d))
			qm1 := new(big.Int).Sub(c.Q, big.NewInt(1))
			one, zero := big.NewInt(1), big.NewInt(0)
			pairs := [][2]*big.Int{{zero, zero}, {zero, one}, {one, zero}, {one, one}, {qm1, one}, {one, qm1}, {qm1, qm1}}
			edges := edgeScalars(c)
			for i, k := range edges {
				pairs = append(pairs, [2]*big.Int{k, edges[(i*7+3)%len(edges)]})
			}
			rs := randomScalars(t, c, 2*random)
			for i := 0; i < random; i++ {
				pairs = append(pairs, [2]*big.Int{rs[2*i], rs[2*i+1]})
			}
			for _, pub := range []struct {
				name string
				x, y *big.Int
			}{{"random Q", qx, qy}, {"Q = G", c.X, c.Y}} {
				mx, my := f.toMont(pub.x), f.toMont(pub.y)
				for _, pr := range pairs {
					k1, k2 := limbsFromBig(pr[0], f.n), limbsFromBig(pr[1], f.n)
					got := ca.verifyMult(&k1, &k2, &mx, &my)
					want := c.twinMult(c.X, c.Y, pr[0], pub.x, pub.y, pr[1])
					if !sameAffine(c, got, want) {
						t.Fatalf("%s, k1 = %x, k2 = %x: wNAF result differs from the reference", pub.name, pr[0], pr[1])
					}
				}
			}
		})
	}
}

// TestWNAFDigits checks that the digits are odd, below 2^(w−1) in
// magnitude, at least w positions apart, and sum back to the scalar.
func TestWNAFDigits(t *testing.T) {
	for _, c := range []*Params{TC26256A, TC26512A} {
		n := c.arith().f.n
		ks := append(edgeScalars(c), randomScalars(t, c, 50)...)
		ks = append(ks, new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(64*n)), big.NewInt(1)))
		for _, w := range []int{keyWNAFBits, baseWNAFBits} {
			for _, k := range ks {
				limbs := limbsFromBig(k, n)
				var digits [64*maxLimbs + 1]int8
				length := wnafDigits(digits[:], &limbs, 64*n, w)
				sum := new(big.Int)
				last := -w
				for i := length - 1; i >= 0; i-- {
					sum.Lsh(sum, 1)
					d := int(digits[i])
					if d == 0 {
						continue
					}
					if d%2 == 0 || d >= 1<<(w-1) || d <= -(1<<(w-1)) {
						t.Fatalf("w=%d k=%x: bad digit %d at %d", w, k, d, i)
					}
					if last >= 0 && last-i < w {
						t.Fatalf("w=%d k=%x: digits at %d and %d are too close", w, k, last, i)
					}
					last = i
					sum.Add(sum, big.NewInt(int64(d)))
				}
				if sum.Cmp(k) != 0 {
					t.Fatalf("w=%d: digits of %x sum to %x", w, k, sum)
				}
			}
		}
	}
}

// TestBoothDigits checks that the signed 5-bit windows sum back to the
// scalar and stay within ±16.
func TestBoothDigits(t *testing.T) {
	for _, c := range []*Params{TC26256A, CryptoProA, TC26512B} {
		n := c.arith().f.n
		for _, k := range append(edgeScalars(c), randomScalars(t, c, 50)...) {
			limbs := limbsFromBig(k, n)
			sum := new(big.Int)
			for i := baseWindows(c.Q) - 1; i >= 0; i-- {
				sum.Lsh(sum, baseWindowBits)
				d, neg := boothDigit(&limbs, i)
				if d > baseWindowPoints {
					t.Fatalf("k=%x window %d: digit %d out of range", k, i, d)
				}
				v := big.NewInt(int64(d))
				if neg == 1 {
					v.Neg(v)
				}
				sum.Add(sum, v)
			}
			if sum.Cmp(k) != 0 {
				t.Fatalf("%s: windows of %x sum to %x", c.Name, k, sum)
			}
		}
	}
}

// TestXCoordinateModQ checks the inversion-free comparison of x mod q with
// r, including points whose x exceeds q (so x mod q ≠ x; tc26 256 A has
// p ≈ 4q) and infinity.
func TestXCoordinateModQ(t *testing.T) {
	for _, c := range []*Params{TC26256A, CryptoProC, TC26512C} {
		ca := c.arith()
		if ca.xCoordinateModQIs(&point{}, big.NewInt(1)) {
			t.Fatalf("%s: infinity matched", c.Name)
		}
		aboveQ := 0
		for _, k := range randomScalars(t, c, 40) {
			p := c.scalarMult(c.X, c.Y, k)
			x, _, _ := c.toAffine(p)
			if x.Cmp(c.Q) >= 0 {
				aboveQ++
			}
			r := new(big.Int).Mod(x, c.Q)
			if r.Sign() == 0 {
				continue
			}
			if !ca.xCoordinateModQIs(&p, r) {
				t.Fatalf("%s k=%x: x mod q = %x not matched", c.Name, k, r)
			}
			wrong := new(big.Int).Add(r, big.NewInt(1))
			if wrong.Mod(wrong, c.Q).Sign() != 0 && ca.xCoordinateModQIs(&p, wrong) {
				t.Fatalf("%s k=%x: wrong r matched", c.Name, k)
			}
		}
		if c == TC26256A && aboveQ == 0 {
			t.Fatalf("%s: no point with x ≥ q among 40; the case went untested", c.Name)
		}
	}
}

// TestModifiedJacobianDoubling checks repeated doubling with T = a·Z⁴
// carried along against the general formulas on the curves with general a
// and on an a = −3 one, from points with Z ≠ 1.
func TestModifiedJacobianDoubling(t *testing.T) {
	for _, c := range []*Params{TC26256A, TC26512C, CryptoProB} {
		ca := c.arith()
		for _, k := range randomScalars(t, c, 5) {
			start := c.scalarMult(c.X, c.Y, k)
			acc := modifiedJacobian{point: start}
			want := start
			for i := 0; i < 10; i++ {
				ca.doubleInPlace(&acc)
				ca.doubleGeneral(&want, &want)
				if !sameAffine(c, acc.point, want) {
					t.Fatalf("%s: doubling %d differs", c.Name, i+1)
				}
			}
		}
	}
}

// TestAffineTableMatchesToAffine checks the batch conversion to affine
// against one inversion per point.
func TestAffineTableMatchesToAffine(t *testing.T) {
	for _, c := range []*Params{TC26256A, TC26512B} {
		ca := c.arith()
		f := ca.f
		var pts []point
		for _, k := range randomScalars(t, c, 9) {
			pts = append(pts, c.scalarMult(c.X, c.Y, k))
		}
		table := ca.toAffineTable(pts)
		for i, p := range pts {
			var x, y fe
			table.load(&x, &y, i)
			wx, wy, _ := c.toAffine(p)
			if f.fromMont(&x).Cmp(wx) != 0 || f.fromMont(&y).Cmp(wy) != 0 {
				t.Fatalf("%s: point %d differs", c.Name, i)
			}
		}
	}
}

// BenchmarkScalarMultSideBySide times, on tc26 256 A, the verification
// multiplication (wNAF with the G table) against the old Shamir's trick and
// the signing one (fixed-base table, constant-time lookups) against the old
// 4-bit window, interleaved in one run.
func BenchmarkScalarMultSideBySide(b *testing.B) {
	c := TC26256A
	ca := c.arith()
	f := ca.f
	ks := randomScalars(b, c, 3)
	qx, qy, _ := c.toAffine(c.scalarMult(c.X, c.Y, ks[0]))
	mx, my := f.toMont(qx), f.toMont(qy)
	k1, k2 := limbsFromBig(ks[1], f.n), limbsFromBig(ks[2], f.n)
	ca.basePointTable()
	ca.baseOddMultiples()
	runs := []struct {
		name string
		run  func()
	}{
		{"verify-wnaf", func() { ca.verifyMult(&k1, &k2, &mx, &my) }},
		{"verify-old", func() { c.twinMult(c.X, c.Y, ks[1], qx, qy, ks[2]) }},
		{"sign-table", func() { c.scalarBaseMult(ks[1]) }},
		{"sign-old", func() { c.scalarMult(c.X, c.Y, ks[1]) }},
	}
	elapsed := make([]time.Duration, len(runs))
	for b.Loop() {
		for i, r := range runs {
			t0 := time.Now()
			r.run()
			elapsed[i] += time.Since(t0)
		}
	}
	for i, r := range runs {
		b.ReportMetric(float64(elapsed[i].Nanoseconds())/float64(b.N), "ns-"+r.name)
	}
}
