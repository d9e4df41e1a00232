package gost

import (
	"errors"
	"fmt"
	"io"
	"math/big"
	"sync"

	"filippo.io/bigmod"
)

// PublicKey is a GOST R 34.10-2012 verification key.
type PublicKey struct {
	Params *Params
	X, Y   *big.Int
}

// PrivateKey is a GOST R 34.10-2012 signing key with its public half.
type PrivateKey struct {
	PublicKey
	D *big.Int
}

// Public returns the verification key.
func (k *PrivateKey) Public() *PublicKey { return &k.PublicKey }

// Bits returns 256 or 512.
func (k *PublicKey) Bits() int { return k.Params.size * 8 }

// Equal reports whether two public keys are the same point on the same curve
// equation. Parameter sets that share a curve (CryptoPro A and tc26 B) compare
// equal.
func (k *PublicKey) Equal(o *PublicKey) bool {
	return k != nil && o != nil && k.Params.P.Cmp(o.Params.P) == 0 && k.Params.Q.Cmp(o.Params.Q) == 0 &&
		k.X.Cmp(o.X) == 0 && k.Y.Cmp(o.Y) == 0
}

// ErrBadSignature reports a signature that does not verify, at any layer:
// the raw GOST signature, a CMS message digest, or a JWS.
var ErrBadSignature = errors.New("gost: signature verification failed")

// ErrInvalidKey reports a key that is not on its curve or out of range.
var ErrInvalidKey = errors.New("gost: invalid key")

// randScalar draws a uniform scalar in [1, q-1] by rejection sampling.
func randScalar(c *Params, rand io.Reader) (*big.Int, error) {
	buf := make([]byte, c.size)
	mask := byte(0xff >> (8*c.size - c.Q.BitLen()))
	for i := 0; i < 1000; i++ {
		if _, err := io.ReadFull(rand, buf); err != nil {
			return nil, fmt.Errorf("gost: reading randomness: %w", err)
		}
		buf[0] &= mask
		k := new(big.Int).SetBytes(buf)
		if k.Sign() > 0 && k.Cmp(c.Q) < 0 {
			return k, nil
		}
	}
	return nil, errors.New("gost: random source keeps yielding out-of-range scalars")
}

// GenerateKey creates a key pair on the given curve.
func GenerateKey(params *Params, rand io.Reader) (*PrivateKey, error) {
	if params == nil {
		return nil, errors.New("gost: nil parameter set")
	}
	d, err := randScalar(params, rand)
	if err != nil {
		return nil, err
	}
	return NewPrivateKey(params, d)
}

// NewPrivateKey derives the public key for the scalar d (1 ≤ d < q).
func NewPrivateKey(params *Params, d *big.Int) (*PrivateKey, error) {
	if d.Sign() <= 0 || d.Cmp(params.Q) >= 0 {
		return nil, fmt.Errorf("%w: private scalar out of range", ErrInvalidKey)
	}
	x, y, ok := params.toAffine(params.scalarBaseMult(d))
	if !ok {
		return nil, fmt.Errorf("%w: public point at infinity", ErrInvalidKey)
	}
	return &PrivateKey{PublicKey: PublicKey{Params: params, X: x, Y: y}, D: new(big.Int).Set(d)}, nil
}

// digestToE maps a hash output to the integer e of RFC 7091 using the
// little-endian convention of the OpenSSL engine (banking.md 9.3): the bytes
// are reversed, read as a big-endian number, reduced mod q, and 0 becomes 1.
func digestToE(c *Params, digest []byte) *big.Int {
	rev := make([]byte, len(digest))
	for i, b := range digest {
		rev[len(digest)-1-i] = b
	}
	e := new(big.Int).SetBytes(rev)
	e.Mod(e, c.Q)
	if e.Sign() == 0 {
		e.SetInt64(1)
	}
	return e
}

// Sign signs a Streebog digest (hash output bytes as Streebog256 returns
// them) and returns the 2·size-byte signature s‖r, each half big-endian.
func Sign(priv *PrivateKey, digest []byte, rand io.Reader) ([]byte, error) {
	if priv == nil || priv.Params == nil {
		return nil, errors.New("gost: nil private key")
	}
	c := priv.Params
	if priv.D == nil || priv.D.Sign() <= 0 || priv.D.Cmp(c.Q) >= 0 {
		return nil, fmt.Errorf("%w: private scalar out of range", ErrInvalidKey)
	}
	e := digestToE(c, digest)
	for i := 0; i < 100; i++ {
		k, err := randScalar(c, rand)
		if err != nil {
			return nil, err
		}
		r, s, ok := signWithK(priv, e, k)
		if ok {
			return packSignature(c, r, s), nil
		}
	}
	return nil, errors.New("gost: could not produce a signature")
}

// signWithK is the RFC 7091 section 6.1 core: C = kP, r = Cx mod q,
// s = (rd + ke) mod q. ok is false when r or s is zero and a new k is needed.
func signWithK(priv *PrivateKey, e, k *big.Int) (r, s *big.Int, ok bool) {
	c := priv.Params
	cx, _, okAff := c.toAffine(c.scalarBaseMult(k))
	if !okAff {
		return nil, nil, false
	}
	r = new(big.Int).Mod(cx, c.Q)
	if r.Sign() == 0 {
		return nil, nil, false
	}
	s, ok = scalarMulAdd(c, r, priv.D, k, e)
	if !ok || s.Sign() == 0 {
		return nil, nil, false
	}
	return r, s, true
}

// scalarModuli caches each parameter set's q as a bigmod.Modulus.
var scalarModuli sync.Map // *Params → *bigmod.Modulus

// scalarMulAdd returns (r·d + k·e) mod q in constant time: d is the private
// key and k the nonce, and math/big's multiplication and reduction take time
// that depends on their values (a nonce's leading zero bits, leaked over many
// signatures, are enough to recover the key). bigmod, the standard library's
// own constant-time modular arithmetic (crypto/internal/bigmod) published as
// a module, works on fixed-size numbers with Montgomery multiplication. ok is
// false when an operand is not below q, which the callers rule out.
func scalarMulAdd(c *Params, r, d, k, e *big.Int) (*big.Int, bool) {
	m, _ := scalarModuli.Load(c)
	if m == nil {
		q, err := bigmod.NewModulus(c.Q.FillBytes(make([]byte, c.size)))
		if err != nil {
			return nil, false // q is an odd prime in every parameter set
		}
		m, _ = scalarModuli.LoadOrStore(c, q)
	}
	q := m.(*bigmod.Modulus)
	buf := make([]byte, c.size)
	var nats [4]*bigmod.Nat
	for i, v := range [4]*big.Int{r, d, k, e} {
		if v.Sign() < 0 || v.Cmp(c.Q) >= 0 {
			return nil, false
		}
		n, err := bigmod.NewNat().SetBytes(v.FillBytes(buf), q)
		if err != nil {
			return nil, false
		}
		nats[i] = n
	}
	rd := nats[0].Mul(nats[1], q)
	ke := nats[2].Mul(nats[3], q)
	return new(big.Int).SetBytes(rd.Add(ke, q).Bytes(q)), true
}

func packSignature(c *Params, r, s *big.Int) []byte {
	out := make([]byte, 2*c.size)
	s.FillBytes(out[:c.size])
	r.FillBytes(out[c.size:])
	return out
}

// Verify checks a signature s‖r (as Sign produces) over a Streebog digest.
// It returns nil or an error wrapping ErrBadSignature.
func Verify(pub *PublicKey, digest []byte, sig []byte) error {
	if pub == nil || pub.Params == nil {
		return fmt.Errorf("%w: nil public key", ErrBadSignature)
	}
	c := pub.Params
	if len(sig) != 2*c.size {
		return fmt.Errorf("%w: signature is %d bytes, want %d", ErrBadSignature, len(sig), 2*c.size)
	}
	s := new(big.Int).SetBytes(sig[:c.size])
	r := new(big.Int).SetBytes(sig[c.size:])
	if verifyE(pub, digestToE(c, digest), r, s) {
		return nil
	}
	return ErrBadSignature
}

// verifyE is RFC 7091 section 6.2 on the integer e.
func verifyE(pub *PublicKey, e, r, s *big.Int) bool {
	c := pub.Params
	if r.Sign() <= 0 || r.Cmp(c.Q) >= 0 || s.Sign() <= 0 || s.Cmp(c.Q) >= 0 {
		return false
	}
	if !c.IsOnCurve(pub.X, pub.Y) {
		return false
	}
	v := new(big.Int).ModInverse(e, c.Q)
	if v == nil {
		return false
	}
	z1 := new(big.Int).Mul(s, v)
	z1.Mod(z1, c.Q)
	z2 := new(big.Int).Mul(r, v)
	z2.Neg(z2)
	z2.Mod(z2, c.Q)
	ca := c.arith()
	f := ca.f
	k1, k2 := limbsFromBig(z1, f.n), limbsFromBig(z2, f.n)
	qx, qy := f.toMont(pub.X), f.toMont(pub.Y)
	sum := ca.verifyMult(&k1, &k2, &qx, &qy)
	return ca.xCoordinateModQIs(&sum, r)
}

// MarshalPublicKeyRaw returns X‖Y, each coordinate little-endian, the content
// of the OCTET STRING inside a GOST SubjectPublicKeyInfo.
func MarshalPublicKeyRaw(pub *PublicKey) []byte {
	n := pub.Params.size
	out := make([]byte, 2*n)
	pub.X.FillBytes(out[:n])
	pub.Y.FillBytes(out[n:])
	reverse(out[:n])
	reverse(out[n:])
	return out
}

// ParsePublicKeyRaw decodes X‖Y (little-endian halves) on the given curve and
// checks that the point lies on it.
func ParsePublicKeyRaw(params *Params, raw []byte) (*PublicKey, error) {
	n := params.size
	if len(raw) != 2*n {
		return nil, fmt.Errorf("%w: public key is %d bytes, want %d", ErrInvalidKey, len(raw), 2*n)
	}
	xb := append([]byte(nil), raw[:n]...)
	yb := append([]byte(nil), raw[n:]...)
	reverse(xb)
	reverse(yb)
	pub := &PublicKey{Params: params, X: new(big.Int).SetBytes(xb), Y: new(big.Int).SetBytes(yb)}
	if !params.IsOnCurve(pub.X, pub.Y) {
		return nil, fmt.Errorf("%w: point not on %s", ErrInvalidKey, params.Name)
	}
	return pub, nil
}

func reverse(b []byte) {
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
}
