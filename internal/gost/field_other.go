//go:build !amd64 || purego

package gost

// Where the assembly is not built (other architectures, or the purego tag)
// the field methods are the Go code itself, and no CPU check (hasMULX)
// is needed.

// mul sets z = x·y·R⁻¹ mod p. z may alias x or y.
func (f *montField) mul(z, x, y *fe) { f.mulGeneric(z, x, y) }

// sqr sets z = x²·R⁻¹ mod p. z may alias x.
func (f *montField) sqr(z, x *fe) { f.mulGeneric(z, x, x) }

// add sets z = x + y mod p.
func (f *montField) add(z, x, y *fe) { f.addGeneric(z, x, y) }

// sub sets z = x − y mod p.
func (f *montField) sub(z, x, y *fe) { f.subGeneric(z, x, y) }
