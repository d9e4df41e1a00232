package gost

import (
	"crypto/rand"
	"math/big"
	"testing"
)

// TestMontFieldMatchesBig checks the fixed-width arithmetic against math/big
// on random and edge-case operands for 256- and 512-bit primes, including
// ones without the top bit set.
func TestMontFieldMatchesBig(t *testing.T) {
	primes := []struct {
		name string
		p    *big.Int
		n    int
	}{
		{"cpA", CryptoProA.P, 4},
		{"cpC", CryptoProC.P, 4},
		{"rfc7091-256", hexBig(t, "8000000000000000000000000000000000000000000000000000000000000431"), 4},
		{"512A", TC26512A.P, 8},
		{"rfc7091-512", hexBig(t, "4531acd1fe0023c7550d267b6b2fee80922b14b2ffb90f04d4eb7c09b5d2d15df1d852741af4704a0458047e80e4546d35b8336fac224dd81664bbf528be6373"), 8},
	}
	for _, tc := range primes {
		t.Run(tc.name, func(t *testing.T) {
			f := newMontField(tc.p, tc.n)
			pm1 := new(big.Int).Sub(tc.p, big.NewInt(1))
			operands := []*big.Int{big.NewInt(0), big.NewInt(1), big.NewInt(2), pm1}
			for i := 0; i < 20; i++ {
				r, err := rand.Int(rand.Reader, tc.p)
				if err != nil {
					t.Fatal(err)
				}
				operands = append(operands, r)
			}
			mod := func(v *big.Int) *big.Int { return v.Mod(v, tc.p) }
			for _, a := range operands {
				for _, b := range operands[:8] {
					ma, mb := f.toMont(a), f.toMont(b)
					var z fe
					f.mul(&z, &ma, &mb)
					if got, want := f.fromMont(&z), mod(new(big.Int).Mul(a, b)); got.Cmp(want) != 0 {
						t.Fatalf("mul(%x, %x) = %x, want %x", a, b, got, want)
					}
					f.add(&z, &ma, &mb)
					if got, want := f.fromMont(&z), mod(new(big.Int).Add(a, b)); got.Cmp(want) != 0 {
						t.Fatalf("add(%x, %x) = %x, want %x", a, b, got, want)
					}
					f.sub(&z, &ma, &mb)
					if got, want := f.fromMont(&z), mod(new(big.Int).Sub(a, b)); got.Cmp(want) != 0 {
						t.Fatalf("sub(%x, %x) = %x, want %x", a, b, got, want)
					}
				}
				if a.Sign() != 0 {
					ma := f.toMont(a)
					var z fe
					f.inv(&z, &ma)
					if got, want := f.fromMont(&z), new(big.Int).ModInverse(a, tc.p); got.Cmp(want) != 0 {
						t.Fatalf("inv(%x) = %x, want %x", a, got, want)
					}
				}
			}
		})
	}
}
