//go:build !purego

package gost

import (
	"crypto/rand"
	"math/big"
	"testing"
	"time"
)

// mulTestPrime is a modulus for the assembly tests with its limb count.
type mulTestPrime struct {
	name string
	p    *big.Int
	n    int
}

// mulTestPrimes are the primes the assembly must handle: every distinct
// curve prime, the RFC 7091 example primes, pseudo-Mersenne primes
// 2²⁵⁶ − c (which take the dedicated 4-limb code), and random primes with
// and without the top bit set (the latter leave headroom the curve primes
// do not).
func mulTestPrimes(t testing.TB) []mulTestPrime {
	t.Helper()
	primes := []mulTestPrime{
		{"cpA-tc26A", CryptoProA.P, 4},
		{"cpB", CryptoProB.P, 4},
		{"cpC", CryptoProC.P, 4},
		{"rfc7091-256", hexBig(t, "8000000000000000000000000000000000000000000000000000000000000431"), 4},
		{"512A-512C", TC26512A.P, 8},
		{"512B", TC26512B.P, 8},
		{"rfc7091-512", hexBig(t, "4531acd1fe0023c7550d267b6b2fee80922b14b2ffb90f04d4eb7c09b5d2d15df1d852741af4704a0458047e80e4546d35b8336fac224dd81664bbf528be6373"), 8},
	}
	// The largest 256-bit prime (c = 189) and c close to 2⁶⁴, the largest
	// the pseudo-Mersenne reduction allows.
	two256 := new(big.Int).Lsh(big.NewInt(1), 256)
	for _, c := range []*big.Int{big.NewInt(189), pseudoMersenneC(t, new(big.Int).Lsh(big.NewInt(1), 64))} {
		primes = append(primes, mulTestPrime{"2^256-" + c.Text(16), new(big.Int).Sub(two256, c), 4})
	}
	for _, size := range []struct{ bits, n int }{{256, 4}, {255, 4}, {193, 4}, {512, 8}, {511, 8}, {449, 8}} {
		p, err := rand.Prime(rand.Reader, size.bits)
		if err != nil {
			t.Fatal(err)
		}
		primes = append(primes, mulTestPrime{"random-" + big.NewInt(int64(size.bits)).String(), p, size.n})
	}
	return primes
}

// pseudoMersenneC returns the largest c < limit with 2²⁵⁶ − c prime.
func pseudoMersenneC(t testing.TB, limit *big.Int) *big.Int {
	t.Helper()
	two256 := new(big.Int).Lsh(big.NewInt(1), 256)
	c := new(big.Int).Sub(limit, big.NewInt(1))
	for i := 0; i < 100000; i++ {
		if new(big.Int).Sub(two256, c).ProbablyPrime(20) {
			return c
		}
		c.Sub(c, big.NewInt(2))
	}
	t.Fatal("no pseudo-Mersenne prime found")
	return nil
}

// requireMULX skips when the CPU cannot run the assembly.
func requireMULX(t testing.TB) {
	t.Helper()
	if !hasMULX {
		t.Skip("CPU lacks BMI2 or ADX")
	}
}

// mulImpl is one assembly entry point for multiplication or squaring.
type mulImpl struct {
	name   string
	limbs  int  // the field size it handles
	square bool // takes x twice; operand pairs are (x, x)
	// pm marks the pseudo-Mersenne routines, which apply only to
	// p = 2²⁵⁶ − c.
	pm  bool
	run func(f *montField, z, x, y *fe)
}

var mulImpls = []mulImpl{
	{"CIOS", 4, false, false, mul4CIOS},
	{"pseudo-Mersenne mul", 4, false, true, mul4PseudoMersenne},
	{"pseudo-Mersenne sqr", 4, true, true, sqr4PseudoMersenne},
	{"CIOS8", 8, false, false, mul8CIOS},
	{"montMul", 0, false, false, montMul},
	{"montSqr", 0, true, false, montSqr},
}

// applies reports whether impl handles the field f.
func (impl mulImpl) applies(f *montField) bool {
	return (impl.limbs == 0 || impl.limbs == f.n) && (!impl.pm || f.pseudoMersenne)
}

// checkMul compares an assembly multiplication with mulGeneric and with
// math/big (x·y·R⁻¹ mod p) on plain integers x and y, which must be below
// p.
func checkMul(t *testing.T, f *montField, impl mulImpl, x, y *big.Int) {
	t.Helper()
	if impl.square {
		y = x
	}
	n := f.n
	xl, yl := limbsFromBig(x, n), limbsFromBig(y, n)
	var asm, gen fe
	impl.run(f, &asm, &xl, &yl)
	f.mulGeneric(&gen, &xl, &yl)
	if asm != gen {
		t.Fatalf("%s x=%x y=%x: assembly %x, Go %x", impl.name, x, y, asm[:n], gen[:n])
	}
	rInv := new(big.Int).Lsh(big.NewInt(1), uint(64*n))
	rInv.ModInverse(rInv, f.pBig)
	want := new(big.Int).Mul(x, y)
	want.Mul(want, rInv).Mod(want, f.pBig)
	if got := bigFromLimbs(&asm, n); got.Cmp(want) != 0 {
		t.Fatalf("%s x=%x y=%x: got %x, want %x", impl.name, x, y, got, want)
	}
}

// boundaryOperands returns x, y < p whose Montgomery product before the
// final subtraction is exactly target (which must lie in [0, 2p)), or false
// if this y admits none. With R = 2^(64n), the unreduced product is
// t = (x·y + m·p)/R for the unique m < R that makes the division exact, so
// choosing y and an m ≡ t·R·p⁻¹ (mod y) in the right range fixes x.
func boundaryOperands(p, y, target *big.Int, n int) (x *big.Int, ok bool) {
	r := new(big.Int).Lsh(big.NewInt(1), uint(64*n))
	tr := new(big.Int).Mul(target, r)
	pInvY := new(big.Int).ModInverse(p, y)
	if pInvY == nil {
		return nil, false
	}
	residue := new(big.Int).Mul(tr, pInvY)
	residue.Mod(residue, y)
	// m = floor(t·R/p) rounded down to the residue class keeps x in [0, p).
	m := new(big.Int).Div(tr, p)
	diff := new(big.Int).Sub(m, residue)
	diff.Mod(diff, y)
	m.Sub(m, diff)
	if m.Sign() < 0 || m.Cmp(r) >= 0 {
		return nil, false
	}
	x = new(big.Int).Mul(m, p)
	x.Sub(tr, x)
	x.Div(x, y)
	if x.Sign() < 0 || x.Cmp(p) >= 0 {
		return nil, false
	}
	return x, true
}

// TestMulAssemblyMatchesGeneric checks every assembly multiplication and
// squaring against the Go code bit for bit on every prime it applies to:
// all pairs of edge values, operands whose unreduced product sits just
// below and just above p (where the final subtraction switches; exactly p
// would need p to divide x·y) and well above it, and thousands of random
// pairs.
func TestMulAssemblyMatchesGeneric(t *testing.T) {
	requireMULX(t)
	random := 3000
	if testing.Short() {
		random = 300
	}
	for _, tc := range mulTestPrimes(t) {
		f := newMontField(tc.p, tc.n)
		for _, impl := range mulImpls {
			if !impl.applies(f) {
				continue
			}
			t.Run(tc.name+"/"+impl.name, func(t *testing.T) {
				testMulImpl(t, f, impl, random)
			})
		}
	}
}

func testMulImpl(t *testing.T, f *montField, impl mulImpl, random int) {
	p, n := f.pBig, f.n
	one := big.NewInt(1)
	r := new(big.Int).Lsh(one, uint(64*n))
	edges := []*big.Int{
		big.NewInt(0), big.NewInt(1), big.NewInt(2),
		new(big.Int).Sub(p, one), new(big.Int).Sub(p, big.NewInt(2)),
		new(big.Int).Rsh(p, 1), new(big.Int).Add(new(big.Int).Rsh(p, 1), one),
		new(big.Int).Mod(r, p),                            // 1 in Montgomery form
		bigFromLimbs(&f.r2, 4),                            // R² mod p
		new(big.Int).Sub(p, new(big.Int).Mod(r, p)),       // −1 in Montgomery form
		new(big.Int).Sub(new(big.Int).Lsh(one, 64), one),  // one full limb
		new(big.Int).Sub(new(big.Int).Lsh(one, 128), one), // two full limbs
		new(big.Int).Sub(p, new(big.Int).Lsh(one, 192)),   // top limb one short
	}
	for _, x := range edges {
		for _, y := range edges {
			checkMul(t, f, impl, x, y)
		}
	}

	targets := []struct {
		name   string
		t      *big.Int
		reduce bool // whether the final subtraction applies
	}{
		{"p-2", new(big.Int).Sub(p, big.NewInt(2)), false},
		{"p-1", new(big.Int).Sub(p, one), false},
		{"p+1", new(big.Int).Add(p, one), true},
		{"p+2^64", new(big.Int).Add(p, new(big.Int).Lsh(one, 64)), true},
		// The unreduced product stays below p + p²/R, short of 2p; aim
		// halfway into that range.
		{"p+p²/2R", new(big.Int).Add(p, new(big.Int).Rsh(new(big.Int).Mul(p, p), uint(64*n+1))), true},
	}
	if impl.square {
		// Squares cannot be steered to a chosen unreduced value this way;
		// the edge values and random squares cover them.
		targets = nil
	}
	for _, tg := range targets {
		found := 0
		for attempt := 0; attempt < 200 && found < 20; attempt++ {
			y, err := rand.Int(rand.Reader, p)
			if err != nil {
				t.Fatal(err)
			}
			x, ok := boundaryOperands(p, y, tg.t, n)
			if !ok {
				continue
			}
			found++
			xy := new(big.Int).Mul(x, y)
			m := new(big.Int).Sub(new(big.Int).Mul(tg.t, r), xy)
			if m.Mod(m, p).Sign() != 0 || tg.t.Cmp(p) >= 0 != tg.reduce {
				t.Fatalf("%s: boundary construction is wrong", tg.name)
			}
			checkMul(t, f, impl, x, y)
			checkMul(t, f, impl, y, x)
		}
		if found == 0 {
			t.Fatalf("%s: found no operands", tg.name)
		}
	}

	for i := 0; i < random; i++ {
		x, err := rand.Int(rand.Reader, p)
		if err != nil {
			t.Fatal(err)
		}
		y, err := rand.Int(rand.Reader, p)
		if err != nil {
			t.Fatal(err)
		}
		checkMul(t, f, impl, x, y)
	}
}

// TestAddSubAssemblyMatchesGeneric checks montAdd and montSub (4 and 8
// limbs) against the Go code on edge values and random operands, including
// sums that land exactly on p and differences that borrow, also with the
// result aliasing an operand.
func TestAddSubAssemblyMatchesGeneric(t *testing.T) {
	for _, tc := range mulTestPrimes(t) {
		t.Run(tc.name, func(t *testing.T) {
			p, n := tc.p, tc.n
			f := newMontField(p, n)
			one := big.NewInt(1)
			operands := []*big.Int{big.NewInt(0), one, big.NewInt(2), new(big.Int).Sub(p, one),
				new(big.Int).Sub(p, big.NewInt(2)), new(big.Int).Rsh(p, 1), new(big.Int).Add(new(big.Int).Rsh(p, 1), one)}
			for i := 0; i < 300; i++ {
				v, err := rand.Int(rand.Reader, p)
				if err != nil {
					t.Fatal(err)
				}
				operands = append(operands, v)
			}
			for i, a := range operands {
				// Each operand meets the edge values and its neighbours.
				partners := append(operands[:7:7], operands[(i+1)%len(operands)], new(big.Int).Sub(p, a))
				for _, b := range partners {
					if b.Cmp(p) >= 0 {
						continue
					}
					x, y := limbsFromBig(a, n), limbsFromBig(b, n)
					var asm, gen fe
					montAdd(f, &asm, &x, &y)
					f.addGeneric(&gen, &x, &y)
					if asm != gen {
						t.Fatalf("add(%x, %x): assembly %x, Go %x", a, b, asm[:n], gen[:n])
					}
					montSub(f, &asm, &x, &y)
					f.subGeneric(&gen, &x, &y)
					if asm != gen {
						t.Fatalf("sub(%x, %x): assembly %x, Go %x", a, b, asm[:n], gen[:n])
					}
					aliasX, aliasY := x, y
					montAdd(f, &aliasX, &aliasX, &y)
					montSub(f, &aliasY, &x, &aliasY)
					if aliasY != gen {
						t.Fatalf("sub(%x, %x) into y: %x, want %x", a, b, aliasY[:n], gen[:n])
					}
					f.addGeneric(&gen, &x, &y)
					if aliasX != gen {
						t.Fatalf("add(%x, %x) into x: %x, want %x", a, b, aliasX[:n], gen[:n])
					}
				}
			}
		})
	}
}

// TestMulAssemblyAliasing checks z aliasing x or y (and both, for
// squares), which the point formulas rely on.
func TestMulAssemblyAliasing(t *testing.T) {
	requireMULX(t)
	for _, tc := range mulTestPrimes(t)[:6] {
		f := newMontField(tc.p, tc.n)
		for _, impl := range mulImpls {
			if !impl.applies(f) {
				continue
			}
			for i := 0; i < 100; i++ {
				xb, _ := rand.Int(rand.Reader, tc.p)
				yb, _ := rand.Int(rand.Reader, tc.p)
				x, y := limbsFromBig(xb, tc.n), limbsFromBig(yb, tc.n)
				if impl.square {
					y = x
				}
				var want fe
				f.mulGeneric(&want, &x, &y)
				zx, zy := x, y
				impl.run(f, &zx, &zx, &y)
				impl.run(f, &zy, &x, &zy)
				if zx != want || zy != want {
					t.Fatalf("%s %s: aliased results %x, %x, want %x", tc.name, impl.name, zx, zy, want)
				}
			}
		}
	}
}

// TestAssemblyDispatchFallback exercises the dispatchers' jumps to the Go
// code, which this CPU would otherwise never take: with hasMULX cleared
// (as on a CPU without BMI2/ADX) for 4- and 8-limb fields, and for a 6-limb
// field no assembly handles; then a signature round trip without MULX.
func TestAssemblyDispatchFallback(t *testing.T) {
	saved := hasMULX
	defer func() { hasMULX = saved }()
	p384, err := rand.Prime(rand.Reader, 384)
	if err != nil {
		t.Fatal(err)
	}
	fields := []*montField{newMontField(CryptoProA.P, 4), newMontField(TC26512B.P, 8), newMontField(p384, 6)}
	for _, mulx := range []bool{false, saved} {
		hasMULX = mulx
		for _, f := range fields {
			for i := 0; i < 50; i++ {
				xb, _ := rand.Int(rand.Reader, f.pBig)
				yb, _ := rand.Int(rand.Reader, f.pBig)
				x, y := limbsFromBig(xb, f.n), limbsFromBig(yb, f.n)
				var got, want fe
				cases := []struct {
					name      string
					run, base func(z, x, y *fe)
				}{
					{"mul", f.mul, f.mulGeneric},
					{"sqr", func(z, x, _ *fe) { f.sqr(z, x) }, func(z, x, _ *fe) { f.mulGeneric(z, x, x) }},
					{"add", f.add, f.addGeneric},
					{"sub", f.sub, f.subGeneric},
				}
				for _, c := range cases {
					c.run(&got, &x, &y)
					c.base(&want, &x, &y)
					if got != want {
						t.Fatalf("hasMULX=%v n=%d %s: got %x, want %x", mulx, f.n, c.name, got, want)
					}
				}
			}
		}
	}
	hasMULX = false
	priv, err := GenerateKey(TC26256A, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	digest := Streebog256([]byte("fallback"))
	sig, err := Sign(priv, digest[:], rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(priv.Public(), digest[:], sig); err != nil {
		t.Fatalf("verify without MULX: %v", err)
	}
}

// BenchmarkMul4SideBySide runs chains of dependent multiplications modulo
// the tc26 256 A prime (2²⁵⁶ − 617) with each assembly routine and with the
// Go code, interleaved, and reports each one's time per multiplication and
// the Go ÷ montMul ratio. Dependent chains measure latency, which is what
// the point formulas mostly see.
func BenchmarkMul4SideBySide(b *testing.B) {
	requireMULX(b)
	f := newMontField(TC26256A.P, 4)
	x := f.toMont(big.NewInt(12345))
	y := f.toMont(big.NewInt(67890))
	const chain = 1000
	impls := []struct {
		name string
		run  func(z, x, y *fe)
	}{
		{"montMul", func(z, x, y *fe) { montMul(f, z, x, y) }},
		{"sqr", func(z, x, _ *fe) { sqr4PseudoMersenne(f, z, x, x) }},
		{"CIOS", func(z, x, y *fe) { mul4CIOS(f, z, x, y) }},
		{"go", f.mul4Generic},
	}
	elapsed := make([]time.Duration, len(impls))
	for b.Loop() {
		for i, impl := range impls {
			t0 := time.Now()
			for j := 0; j < chain; j++ {
				impl.run(&x, &x, &y)
			}
			elapsed[i] += time.Since(t0)
		}
	}
	n := float64(b.N) * chain
	for i, impl := range impls {
		b.ReportMetric(float64(elapsed[i].Nanoseconds())/n, "ns-"+impl.name)
	}
	b.ReportMetric(float64(elapsed[3])/float64(elapsed[0]), "go÷asm")
}

// BenchmarkMul8SideBySide is BenchmarkMul4SideBySide for the 512-bit tc26
// A prime: the 8-limb assembly against the Go loop.
func BenchmarkMul8SideBySide(b *testing.B) {
	requireMULX(b)
	f := newMontField(TC26512A.P, 8)
	x := f.toMont(big.NewInt(12345))
	y := f.toMont(big.NewInt(67890))
	const chain = 1000
	var asm, generic time.Duration
	for b.Loop() {
		t0 := time.Now()
		for j := 0; j < chain; j++ {
			mul8CIOS(f, &x, &x, &y)
		}
		t1 := time.Now()
		for j := 0; j < chain; j++ {
			f.mulGeneric(&x, &x, &y)
		}
		asm += t1.Sub(t0)
		generic += time.Since(t1)
	}
	n := float64(b.N) * chain
	b.ReportMetric(float64(asm.Nanoseconds())/n, "ns-asm")
	b.ReportMetric(float64(generic.Nanoseconds())/n, "ns-go")
	b.ReportMetric(float64(generic)/float64(asm), "go÷asm")
}
