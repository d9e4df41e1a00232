package gost

import (
	"crypto/rand"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"math/big"
	"time"
)

// CreateCertificateRequest makes a PKCS#10 request (DER) for key with
// subject CN=commonName, signed by key. A non-empty bicryptID is carried
// in the extension 1.2.643.3.123.3.1 of an extensionRequest attribute, as
// the provider's requests carry it.
func CreateCertificateRequest(key *PrivateKey, commonName, bicryptID string) ([]byte, error) {
	if key == nil || key.Params == nil {
		return nil, errors.New("gost: nil private key")
	}
	name, err := asn1.Marshal(pkix.Name{CommonName: commonName}.ToRDNSequence())
	if err != nil {
		return nil, err
	}
	attrs := derWrap(tagContext0)
	if bicryptID != "" {
		value := mustMarshal(asn1.RawValue{Class: asn1.ClassUniversal, Tag: asn1.TagUTF8String, Bytes: []byte(bicryptID)})
		exts := derWrap(tagSequence, extension(oidBicryptID, false, value))
		attrs = derWrap(tagContext0, derWrap(tagSequence, mustMarshal(oidExtensionRequest), derWrap(tagSet, exts)))
	}
	info := derWrap(tagSequence, mustMarshal(0), name, MarshalPublicKey(&key.PublicKey), attrs)
	h := newHashFor(key.Params)
	h.Write(info)
	sig, err := Sign(key, h.Sum(nil), rand.Reader)
	if err != nil {
		return nil, err
	}
	sigAlg := derWrap(tagSequence, mustMarshal(signatureOID(key.Params)))
	return derWrap(tagSequence, info, sigAlg, derWrap(tagBitString, []byte{0}, sig)), nil
}

// IssueCertificate issues an end-entity X.509 v3 certificate for the key
// and subject of req, signed by the CA certificate ca with its key caKey.
// It carries the subject key identifier, the CA's as the authority key
// identifier, basicConstraints CA:FALSE and keyUsage digitalSignature,
// nonRepudiation: a signing certificate that OpenSSL verifies against ca.
func IssueCertificate(req *CertificateRequest, ca *Certificate, caKey *PrivateKey, notBefore, notAfter time.Time) (*Certificate, error) {
	if req == nil || ca == nil || caKey == nil || caKey.Params == nil {
		return nil, errors.New("gost: nil request or CA")
	}
	if !ca.PublicKey.Equal(caKey.Public()) {
		return nil, errors.New("gost: the CA certificate is not the CA key's")
	}
	serialBytes := make([]byte, 16)
	if _, err := rand.Read(serialBytes); err != nil {
		return nil, err
	}
	serialBytes[0] = serialBytes[0]&0x7f | 0x10 // 16 bytes long and positive
	serial := new(big.Int).SetBytes(serialBytes)

	skiFull := Streebog256(MarshalPublicKeyRaw(req.PublicKey))
	exts := [][]byte{
		extension(oidExtSubjectKeyID, false, mustMarshal(skiFull[:20])),
		extension(oidExtBasicConstr, true, mustMarshal(struct{}{})),
		// digitalSignature(0), nonRepudiation(1): bits 1100 0000.
		extension(oidExtKeyUsage, true, mustMarshal(asn1.BitString{Bytes: []byte{0xc0}, BitLength: 2})),
	}
	if len(ca.SubjectKeyID) > 0 {
		exts = append(exts, extension(oidExtAuthorityKeyID, false, derWrap(tagSequence, derWrap(tagContext0Prm, ca.SubjectKeyID))))
	}
	sigAlg := derWrap(tagSequence, mustMarshal(signatureOID(caKey.Params)))
	validity := derWrap(tagSequence, mustMarshal(notBefore.UTC()), mustMarshal(notAfter.UTC()))
	tbs := derWrap(tagSequence,
		derWrap(tagContext0, mustMarshal(2)),
		mustMarshal(serial),
		sigAlg,
		ca.RawSubject,
		validity,
		req.RawSubject,
		MarshalPublicKey(req.PublicKey),
		derWrap(0xa3, derWrap(tagSequence, exts...)),
	)
	h := newHashFor(caKey.Params)
	h.Write(tbs)
	sig, err := Sign(caKey, h.Sum(nil), rand.Reader)
	if err != nil {
		return nil, err
	}
	return ParseCertificate(derWrap(tagSequence, tbs, sigAlg, derWrap(tagBitString, []byte{0}, sig)))
}
