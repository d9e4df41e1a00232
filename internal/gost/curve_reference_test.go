package gost

import "math/big"

// The scalar multiplications signing and verification used before the
// fixed-base table and wNAF (base_point_table.go, verify_mult.go), kept as
// independent references for the tests.

// scalarMult returns k·(x, y) using a fixed 4-bit window: a table of
// 0..15 multiples, then four doublings and one table addition per nibble.
// k must be non-negative.
func (c *Params) scalarMult(x, y, k *big.Int) point {
	ca := c.arith()
	f := ca.f
	px, py := f.toMont(new(big.Int).Mod(x, c.P)), f.toMont(new(big.Int).Mod(y, c.P))
	var table [16]point
	table[1] = ca.affinePoint(&px, &py)
	for i := 2; i < 16; i++ {
		ca.add(&table[i], &table[i-1], &table[1])
	}
	var acc point
	nibbles := (k.BitLen() + 3) / 4
	for i := nibbles - 1; i >= 0; i-- {
		for d := 0; d < 4; d++ {
			ca.double(&acc, &acc)
		}
		w := k.Bit(4*i) | k.Bit(4*i+1)<<1 | k.Bit(4*i+2)<<2 | k.Bit(4*i+3)<<3
		if w != 0 {
			ca.add(&acc, &acc, &table[w])
		}
	}
	return acc
}

// twinMult returns k1·P1 + k2·P2 with Shamir's trick over 2-bit windows:
// one table of i·P1 + j·P2 for i, j in 0..3 and shared doublings.
func (c *Params) twinMult(x1, y1, k1, x2, y2, k2 *big.Int) point {
	ca := c.arith()
	f := ca.f
	ax, ay := f.toMont(new(big.Int).Mod(x1, c.P)), f.toMont(new(big.Int).Mod(y1, c.P))
	bx, by := f.toMont(new(big.Int).Mod(x2, c.P)), f.toMont(new(big.Int).Mod(y2, c.P))
	var table [16]point // index i + 4j = i·P1 + j·P2
	table[1] = ca.affinePoint(&ax, &ay)
	table[4] = ca.affinePoint(&bx, &by)
	ca.double(&table[2], &table[1])
	ca.add(&table[3], &table[2], &table[1])
	ca.double(&table[8], &table[4])
	ca.add(&table[12], &table[8], &table[4])
	for j := 1; j < 4; j++ {
		for i := 1; i < 4; i++ {
			ca.add(&table[i+4*j], &table[i], &table[4*j])
		}
	}
	n := k1.BitLen()
	if k2.BitLen() > n {
		n = k2.BitLen()
	}
	var acc point
	for i := (n+1)/2 - 1; i >= 0; i-- {
		ca.double(&acc, &acc)
		ca.double(&acc, &acc)
		w := k1.Bit(2*i) | k1.Bit(2*i+1)<<1 | (k2.Bit(2*i)|k2.Bit(2*i+1)<<1)<<2
		if w != 0 {
			ca.add(&acc, &acc, &table[w])
		}
	}
	return acc
}
