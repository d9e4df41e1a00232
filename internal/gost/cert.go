package gost

import (
	"bytes"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"time"
)

// Certificate is a parsed GOST X.509 certificate. crypto/x509 does the
// generic parsing; the GOST key and signature are read here.
type Certificate struct {
	Raw          []byte // DER
	SerialNumber *big.Int
	SerialHex    string // lower-case hex of the serial, no separators
	Issuer       string // RFC 2253 form, e.g. "CN=Test CA,O=Bank"
	Subject      string
	NotBefore    time.Time
	NotAfter     time.Time
	PublicKey    *PublicKey
	SubjectKeyID []byte // from the extension; nil when absent

	RawIssuer  []byte // DER Name, used for issuerAndSerialNumber
	RawSubject []byte
	X509       *x509.Certificate // the generic parse, for extensions and names

	signatureOID asn1.ObjectIdentifier
	signature    []byte // s‖r
}

// ParseCertificate parses one certificate given as DER, PEM or base64 DER
// (the form /v1/crypto carries), PEM only when the input opens with its
// boundary (pemInput). Certificates whose key is not GOST R
// 34.10-2012 give an error wrapping ErrNotGOST.
//
// A PEM file may hold the certificate's chain after it, as CAs deliver a
// signing certificate (leaf first, then its issuers, the order of TLS's
// certificate_list and of the files nginx and OpenSSL read): the first
// block is the certificate, and each other block must be a CERTIFICATE
// that parses as X.509, at most MaxCertificates in all. A chain whose
// first certificate is a CA's is refused: that file is in the other order,
// and taking its first certificate would register the CA's key as the
// signer's.
func ParseCertificate(data []byte) (*Certificate, error) {
	der := data
	chain := false
	if blocks, isPEM := pemBlocks(data, MaxCertificates); isPEM {
		if blocks == nil {
			return nil, malformed("certificate opens as PEM but is not a sequence of at most %d PEM blocks", MaxCertificates)
		}
		for i, block := range blocks {
			if block.Type != "CERTIFICATE" {
				return nil, fmt.Errorf("%w: PEM block %d is %q, want CERTIFICATE", ErrMalformed, i+1, block.Type)
			}
			if i > 0 {
				if _, err := x509.ParseCertificate(block.Bytes); err != nil {
					return nil, fmt.Errorf("%w: certificate %d of the chain: %v", ErrMalformed, i+1, err)
				}
			}
		}
		der, chain = blocks[0].Bytes, len(blocks) > 1
	} else if len(data) > 0 && data[0] != tagSequence {
		dec, err := base64.StdEncoding.DecodeString(string(bytes.TrimSpace(data)))
		if err != nil {
			return nil, malformed("certificate is neither DER, PEM nor base64")
		}
		der = dec
	}
	xc, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("%w: certificate: %v", ErrMalformed, err)
	}
	if chain && xc.IsCA {
		return nil, fmt.Errorf("%w: the chain's first certificate, %q, is a CA's: put the signer's certificate first", ErrMalformed, xc.Subject.String())
	}
	pub, err := ParsePublicKey(xc.RawSubjectPublicKeyInfo)
	if err != nil {
		return nil, fmt.Errorf("certificate %q: %w", xc.Subject.String(), err)
	}
	sigOID, sig, err := outerSignature(der)
	if err != nil {
		return nil, err
	}
	return &Certificate{
		Raw:          der,
		SerialNumber: xc.SerialNumber,
		SerialHex:    xc.SerialNumber.Text(16),
		Issuer:       xc.Issuer.String(),
		Subject:      xc.Subject.String(),
		NotBefore:    xc.NotBefore,
		NotAfter:     xc.NotAfter,
		PublicKey:    pub,
		SubjectKeyID: xc.SubjectKeyId,
		RawIssuer:    xc.RawIssuer,
		RawSubject:   xc.RawSubject,
		X509:         xc,
		signatureOID: sigOID,
		signature:    sig,
	}, nil
}

// outerSignature reads signatureAlgorithm and signatureValue of a
// certificate, which crypto/x509 leaves unparsed for unknown algorithms.
func outerSignature(der []byte) (asn1.ObjectIdentifier, []byte, error) {
	el, _, err := parseTLV(der, 0)
	if err != nil {
		return nil, nil, err
	}
	r := el.children()
	if _, err := r.read(tagSequence); err != nil {
		return nil, nil, err
	}
	oid, _, err := r.readAlgorithm()
	if err != nil {
		return nil, nil, err
	}
	bits, err := r.read(tagBitString)
	if err != nil {
		return nil, nil, err
	}
	if len(bits.content) < 1 || bits.content[0] != 0 {
		return nil, nil, malformed("signature BIT STRING has unused bits")
	}
	return oid, bits.content[1:], nil
}

// CheckSignatureFrom verifies that parent's key signed c (for a self-signed
// certificate, pass c itself).
func (c *Certificate) CheckSignatureFrom(parent *Certificate) error {
	want := signatureOID(parent.PublicKey.Params)
	if !c.signatureOID.Equal(want) {
		return fmt.Errorf("%w: certificate signed with %s, issuer key needs %s", ErrBadSignature, c.signatureOID, want)
	}
	h := newHashFor(parent.PublicKey.Params)
	h.Write(c.X509.RawTBSCertificate)
	return Verify(parent.PublicKey, h.Sum(nil), c.signature)
}

// ValidAt reports whether t falls within the certificate's validity period.
func (c *Certificate) ValidAt(t time.Time) bool {
	return !t.Before(c.NotBefore) && !t.After(c.NotAfter)
}

// PEM returns the certificate as a PEM block.
func (c *Certificate) PEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

var (
	oidExtSubjectKeyID   = asn1.ObjectIdentifier{2, 5, 29, 14}
	oidExtAuthorityKeyID = asn1.ObjectIdentifier{2, 5, 29, 35}
	oidExtBasicConstr    = asn1.ObjectIdentifier{2, 5, 29, 19}
	oidExtKeyUsage       = asn1.ObjectIdentifier{2, 5, 29, 15}
)

// SelfSignedCertificate issues a self-signed X.509 v3 certificate for key
// with subject and issuer CN=commonName. It carries subject and authority
// key identifiers, basicConstraints CA:TRUE (so that OpenSSL accepts it as its
// own trust anchor) and keyUsage digitalSignature, nonRepudiation, keyCertSign.
func SelfSignedCertificate(key *PrivateKey, commonName string, notBefore, notAfter time.Time) (*Certificate, error) {
	if key == nil || key.Params == nil {
		return nil, errors.New("gost: nil private key")
	}
	serialBytes := make([]byte, 16)
	if _, err := rand.Read(serialBytes); err != nil {
		return nil, err
	}
	serialBytes[0] &= 0x7f
	serialBytes[0] |= 0x10 // keep the serial 16 bytes long and positive
	serial := new(big.Int).SetBytes(serialBytes)

	name, err := asn1.Marshal(pkix.Name{CommonName: commonName}.ToRDNSequence())
	if err != nil {
		return nil, err
	}
	spki := MarshalPublicKey(&key.PublicKey)
	skiFull := Streebog256(MarshalPublicKeyRaw(&key.PublicKey))
	ski := skiFull[:20]

	exts := [][]byte{
		extension(oidExtSubjectKeyID, false, mustMarshal(ski)),
		extension(oidExtAuthorityKeyID, false, derWrap(tagSequence, derWrap(tagContext0Prm, ski))),
		extension(oidExtBasicConstr, true, mustMarshal(struct{ CA bool }{true})),
		// digitalSignature(0), nonRepudiation(1), keyCertSign(5): bits 1100 0100.
		extension(oidExtKeyUsage, true, mustMarshal(asn1.BitString{Bytes: []byte{0xc4}, BitLength: 6})),
	}
	// RFC 9215: the signature AlgorithmIdentifier has no parameters.
	sigAlg := derWrap(tagSequence, mustMarshal(signatureOID(key.Params)))
	validity := derWrap(tagSequence, mustMarshal(notBefore.UTC()), mustMarshal(notAfter.UTC()))
	tbs := derWrap(tagSequence,
		derWrap(tagContext0, mustMarshal(2)),
		mustMarshal(serial),
		sigAlg,
		name,
		validity,
		name,
		spki,
		derWrap(0xa3, derWrap(tagSequence, exts...)),
	)
	h := newHashFor(key.Params)
	h.Write(tbs)
	sig, err := Sign(key, h.Sum(nil), rand.Reader)
	if err != nil {
		return nil, err
	}
	der := derWrap(tagSequence, tbs, sigAlg, derWrap(tagBitString, []byte{0}, sig))
	return ParseCertificate(der)
}

func extension(oid asn1.ObjectIdentifier, critical bool, value []byte) []byte {
	parts := [][]byte{mustMarshal(oid)}
	if critical {
		parts = append(parts, mustMarshal(true))
	}
	parts = append(parts, derWrap(tagOctetString, value))
	return derWrap(tagSequence, parts...)
}
