//go:build !purego

package gost

import "golang.org/x/sys/cpu"

// hasMULX reports whether the CPU has MULX (BMI2) and ADCX/ADOX (ADX), which
// the assembly Montgomery multiplication needs. Every Intel CPU since
// Broadwell and AMD since Zen has them; older ones take the Go code.
var hasMULX = cpu.X86.HasBMI2 && cpu.X86.HasADX

// montMul, montSqr, montAdd and montSub (field_amd64.s) compute
// z = x·y·R⁻¹, x²·R⁻¹, x + y and x − y mod p, fully reduced, in assembly for
// 4-limb fields, and jump to mulFallback, addFallback and subFallback
// otherwise. z may alias x or y. montSqr takes x twice so that it can hand
// its arguments unchanged to montMul.
//
//go:noescape
func montMul(f *montField, z, x, y *fe)

//go:noescape
func montSqr(f *montField, z, x, xAgain *fe)

//go:noescape
func montAdd(f *montField, z, x, y *fe)

//go:noescape
func montSub(f *montField, z, x, y *fe)

// mul4CIOS, mul4PseudoMersenne and sqr4PseudoMersenne are the assembly
// multiplications montMul and montSqr choose between; tests call them
// directly. They need BMI2 and ADX, 4-limb fields and, for the
// pseudo-Mersenne ones, f.pseudoMersenne.
//
//go:noescape
func mul4CIOS(f *montField, z, x, y *fe)

//go:noescape
func mul4PseudoMersenne(f *montField, z, x, y *fe)

//go:noescape
func sqr4PseudoMersenne(f *montField, z, x, xAgain *fe)

// mul8CIOS (field8_amd64.s) is the 8-limb multiplication montMul chooses
// for 512-bit fields; it needs BMI2 and ADX. Tests call it directly.
//
//go:noescape
func mul8CIOS(f *montField, z, x, y *fe)

// add8 and sub8 (field8_amd64.s) are montAdd and montSub for 8-limb
// fields. Only montAdd and montSub jump to them, so no Go code calls them:
// they are declared here for go vet's check of the assembly's frames, and
// the lint:ignore directives tell staticcheck, which does not read
// assembly, that they are used.
//
//go:noescape
//lint:ignore U1000 montAdd in field_amd64.s jumps to it
func add8(f *montField, z, x, y *fe)

//go:noescape
//lint:ignore U1000 montSub in field_amd64.s jumps to it
func sub8(f *montField, z, x, y *fe)

// mulFallback, addFallback and subFallback are where montMul, montAdd and
// montSub jump for fields the assembly does not handle (or CPUs without
// MULX): dispatching in assembly keeps montField.mul, add and sub small
// enough to inline (field_amd64.s). Like add8 and sub8 they are used from
// assembly only.
//
//lint:ignore U1000 montMul in field_amd64.s jumps to it
func mulFallback(f *montField, z, x, y *fe) { f.mulGeneric(z, x, y) }

//lint:ignore U1000 montAdd in field_amd64.s jumps to it
func addFallback(f *montField, z, x, y *fe) { f.addGeneric(z, x, y) }

//lint:ignore U1000 montSub in field_amd64.s jumps to it
func subFallback(f *montField, z, x, y *fe) { f.subGeneric(z, x, y) }

// mul sets z = x·y·R⁻¹ mod p. z may alias x or y.
func (f *montField) mul(z, x, y *fe) { montMul(f, z, x, y) }

// sqr sets z = x²·R⁻¹ mod p. z may alias x.
func (f *montField) sqr(z, x *fe) { montSqr(f, z, x, x) }

// add sets z = x + y mod p.
func (f *montField) add(z, x, y *fe) { montAdd(f, z, x, y) }

// sub sets z = x − y mod p.
func (f *montField) sub(z, x, y *fe) { montSub(f, z, x, y) }
