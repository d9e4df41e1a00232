package gost

import (
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"fmt"
	"hash"
	"math/big"
)

// Object identifiers of RFC 9215 / RFC 7836.
var (
	oidKey256       = asn1.ObjectIdentifier{1, 2, 643, 7, 1, 1, 1, 1}
	oidKey512       = asn1.ObjectIdentifier{1, 2, 643, 7, 1, 1, 1, 2}
	oidDigest256    = asn1.ObjectIdentifier{1, 2, 643, 7, 1, 1, 2, 2}
	oidDigest512    = asn1.ObjectIdentifier{1, 2, 643, 7, 1, 1, 2, 3}
	oidSignature256 = asn1.ObjectIdentifier{1, 2, 643, 7, 1, 1, 3, 2}
	oidSignature512 = asn1.ObjectIdentifier{1, 2, 643, 7, 1, 1, 3, 3}
)

// ErrNotGOST reports a certificate or key whose algorithm is not GOST R
// 34.10-2012 (RSA, ECDSA, GOST R 34.10-2001, ...).
var ErrNotGOST = errors.New("gost: not a GOST R 34.10-2012 key")

func keyOID(p *Params) asn1.ObjectIdentifier {
	if p.size == 64 {
		return oidKey512
	}
	return oidKey256
}

func digestOID(p *Params) asn1.ObjectIdentifier {
	if p.size == 64 {
		return oidDigest512
	}
	return oidDigest256
}

func signatureOID(p *Params) asn1.ObjectIdentifier {
	if p.size == 64 {
		return oidSignature512
	}
	return oidSignature256
}

// newHashFor returns the Streebog variant a key of this size signs with.
func newHashFor(p *Params) hash.Hash {
	if p.size == 64 {
		return NewStreebog512()
	}
	return NewStreebog256()
}

// keyAlgorithmDER is the SPKI/PKCS#8 AlgorithmIdentifier:
// {keyOID, SEQUENCE {publicKeyParamSet, digestParamSet}}, as OpenSSL writes it.
func keyAlgorithmDER(p *Params) []byte {
	params := derWrap(tagSequence, mustMarshal(p.OID), mustMarshal(digestOID(p)))
	return derWrap(tagSequence, mustMarshal(keyOID(p)), params)
}

// parseKeyAlgorithm maps a key AlgorithmIdentifier to a parameter set.
func parseKeyAlgorithm(oid asn1.ObjectIdentifier, params []byte) (*Params, error) {
	var size int
	switch {
	case oid.Equal(oidKey256):
		size = 32
	case oid.Equal(oidKey512):
		size = 64
	default:
		return nil, fmt.Errorf("%w: key algorithm %s", ErrNotGOST, oid)
	}
	if params == nil {
		return nil, malformed("GOST key algorithm without parameters")
	}
	el, _, err := parseTLV(params, 0)
	if err != nil || el.tag != tagSequence {
		return nil, malformed("GOST key parameters are not a SEQUENCE")
	}
	first, err := el.children().read(tagOID)
	if err != nil {
		return nil, err
	}
	setOID, err := first.oid()
	if err != nil {
		return nil, err
	}
	p, ok := ParamsByOID(setOID)
	if !ok {
		return nil, fmt.Errorf("%w: unknown parameter set %s", ErrInvalidKey, setOID)
	}
	if p.size != size {
		return nil, fmt.Errorf("%w: parameter set %s does not fit key algorithm %s", ErrInvalidKey, p.Name, oid)
	}
	return p, nil
}

// MarshalPublicKey returns a DER SubjectPublicKeyInfo: the BIT STRING wraps
// an OCTET STRING holding X‖Y little-endian (RFC 9215 section 4).
func MarshalPublicKey(pub *PublicKey) []byte {
	octets := derWrap(tagOctetString, MarshalPublicKeyRaw(pub))
	bits := derWrap(tagBitString, []byte{0}, octets)
	return derWrap(tagSequence, keyAlgorithmDER(pub.Params), bits)
}

// ParsePublicKey decodes a DER SubjectPublicKeyInfo holding a GOST R
// 34.10-2012 key. Other algorithms give ErrNotGOST.
func ParsePublicKey(spki []byte) (*PublicKey, error) {
	el, n, err := parseTLV(spki, 0)
	if err != nil {
		return nil, err
	}
	if el.tag != tagSequence || n != len(spki) {
		return nil, malformed("SubjectPublicKeyInfo is not one SEQUENCE")
	}
	r := el.children()
	oid, params, err := r.readAlgorithm()
	if err != nil {
		return nil, err
	}
	p, err := parseKeyAlgorithm(oid, params)
	if err != nil {
		return nil, err
	}
	bits, err := r.read(tagBitString)
	if err != nil {
		return nil, err
	}
	if len(bits.content) < 1 || bits.content[0] != 0 {
		return nil, malformed("public key BIT STRING has unused bits")
	}
	octets, n, err := parseTLV(bits.content[1:], 0)
	if err != nil {
		return nil, err
	}
	if octets.tag != tagOctetString || n != len(bits.content)-1 {
		return nil, malformed("public key is not an OCTET STRING")
	}
	if !r.empty() {
		// SubjectPublicKeyInfo is the algorithm and the key alone (RFC
		// 5280 §4.1); a field after them is not DER of it.
		return nil, malformed("SubjectPublicKeyInfo has fields after the key")
	}
	return ParsePublicKeyRaw(p, octets.content)
}

// MarshalPrivateKey returns PKCS#8 DER in the form OpenSSL's GOST engine
// writes: the privateKey OCTET STRING holds the scalar little-endian.
func MarshalPrivateKey(key *PrivateKey) ([]byte, error) {
	if key == nil || key.Params == nil || key.D == nil {
		return nil, errors.New("gost: nil private key")
	}
	n := key.Params.size
	d := make([]byte, n)
	key.D.FillBytes(d)
	reverse(d)
	return derWrap(tagSequence, mustMarshal(0), keyAlgorithmDER(key.Params), derWrap(tagOctetString, d)), nil
}

// ParsePrivateKey reads a PKCS#8 GOST private key, DER or PEM ("PRIVATE
// KEY", when the input opens with its boundary: pemInput). The privateKey field may hold the raw little-endian scalar (current
// OpenSSL engine), an inner OCTET STRING with it, or an inner INTEGER
// (older engine versions).
func ParsePrivateKey(data []byte) (*PrivateKey, error) {
	der := data
	if block, isPEM := pemInput(data); isPEM {
		if block == nil {
			return nil, malformed("private key opens as PEM but is not one PEM block")
		}
		if block.Type != "PRIVATE KEY" {
			return nil, fmt.Errorf("%w: PEM block %q, want PRIVATE KEY", ErrMalformed, block.Type)
		}
		der = block.Bytes
	}
	el, n, err := parseTLV(der, 0)
	if err != nil {
		return nil, err
	}
	if el.tag != tagSequence || n != len(der) {
		return nil, malformed("PKCS#8 is not one SEQUENCE")
	}
	r := el.children()
	if _, err := r.read(tagInteger); err != nil {
		return nil, err
	}
	oid, params, err := r.readAlgorithm()
	if err != nil {
		return nil, err
	}
	p, err := parseKeyAlgorithm(oid, params)
	if err != nil {
		return nil, err
	}
	octets, err := r.read(tagOctetString)
	if err != nil {
		return nil, err
	}
	d, err := privateScalar(p, octets.content)
	if err != nil {
		return nil, err
	}
	return NewPrivateKey(p, d)
}

func privateScalar(p *Params, raw []byte) (*big.Int, error) {
	if len(raw) == p.size {
		le := append([]byte(nil), raw...)
		reverse(le)
		return new(big.Int).SetBytes(le), nil
	}
	inner, n, err := parseTLV(raw, 0)
	if err != nil || n != len(raw) {
		return nil, fmt.Errorf("%w: private key of %d bytes", ErrInvalidKey, len(raw))
	}
	switch inner.tag {
	case tagOctetString:
		if len(inner.content) != p.size {
			return nil, fmt.Errorf("%w: private key of %d bytes", ErrInvalidKey, len(inner.content))
		}
		le := append([]byte(nil), inner.content...)
		reverse(le)
		return new(big.Int).SetBytes(le), nil
	case tagInteger:
		var d *big.Int
		if _, err := asn1.Unmarshal(inner.full, &d); err != nil {
			return nil, fmt.Errorf("%w: private key INTEGER: %v", ErrInvalidKey, err)
		}
		return d, nil
	}
	return nil, fmt.Errorf("%w: unsupported private key encoding", ErrInvalidKey)
}

// MarshalPrivateKeyPEM returns the PKCS#8 key as a PEM "PRIVATE KEY" block.
func MarshalPrivateKeyPEM(key *PrivateKey) ([]byte, error) {
	der, err := MarshalPrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}
