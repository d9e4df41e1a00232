package gost

import (
	"bytes"
	"crypto/rand"
	"encoding/asn1"
	"errors"
	"sort"
	"time"
)

// SignOptions tunes SignDetachedWithOptions.
type SignOptions struct {
	NoSignedAttributes bool      // sign the content directly, as openssl cms -noattr
	BySubjectKeyID     bool      // identify the signer by subjectKeyIdentifier, as openssl cms -keyid
	NoCertificate      bool      // leave the signer certificate out, as openssl cms -nocerts
	SigningTime        time.Time // zero: now

	// ContentType is the eContentType and the contentType attribute (nil:
	// id-data, banking.md 9.2's and the only one VerifyDetached takes).
	// Another type makes a SignedData for another purpose, as a test of
	// its refusal needs.
	ContentType asn1.ObjectIdentifier

	// SignerIssuer is the issuer Name written in issuerAndSerialNumber
	// instead of the certificate's own encoding, as a client re-encoding
	// it from its certificate store may write (nil: the certificate's).
	SignerIssuer []byte

	// Attached carries the content in eContent, as openssl cms -nodetach
	// writes the CMS around a certificate request (ParseCertificateRequest).
	Attached bool
}

// SignDetached creates a detached CMS SignedData (DER) over content in the
// shape of banking.md 9.2: Streebog digest, signed attributes contentType,
// signingTime and messageDigest, signer by issuerAndSerialNumber, the
// certificate embedded.
func SignDetached(content []byte, cert *Certificate, key *PrivateKey) ([]byte, error) {
	return SignDetachedWithOptions(content, cert, key, SignOptions{})
}

// SignDetachedWithOptions is SignDetached with the variations of SignOptions.
func SignDetachedWithOptions(content []byte, cert *Certificate, key *PrivateKey, opt SignOptions) ([]byte, error) {
	if cert == nil || key == nil {
		return nil, errors.New("gost: SignDetached needs a certificate and a key")
	}
	if !cert.PublicKey.Equal(key.Public()) {
		return nil, errors.New("gost: key does not match the certificate")
	}
	contentType := oidData
	if opt.ContentType != nil {
		contentType = opt.ContentType
	}
	var attrs [][]byte
	if !opt.NoSignedAttributes {
		st := opt.SigningTime
		if st.IsZero() {
			st = time.Now()
		}
		h := newHashFor(key.Params)
		h.Write(content)
		attrs = [][]byte{
			attribute(oidContentType, mustMarshal(contentType)),
			attribute(oidSigningTime, mustMarshal(st.UTC().Truncate(time.Second))),
			attribute(oidMessageDigest, mustMarshal(h.Sum(nil))),
		}
	}
	return signWithAttributes(content, cert, key, opt, contentType, attrs)
}

// signWithAttributes writes the SignedData of SignDetachedWithOptions with
// attrs (each a DER Attribute) as its signed attributes, none when attrs is
// nil. The tests of the verifier's attribute checks give it attributes no
// real signer writes.
func signWithAttributes(content []byte, cert *Certificate, key *PrivateKey, opt SignOptions, contentType asn1.ObjectIdentifier, attrs [][]byte) ([]byte, error) {
	params := key.Params
	digestAlg := derWrap(tagSequence, mustMarshal(digestOID(params)), []byte{tagNull, 0})
	h := newHashFor(params)
	h.Write(content)
	toSign := h.Sum(nil)
	var signedAttrs []byte
	if attrs != nil {
		// DER orders SET OF by the encodings.
		attrs = append([][]byte{}, attrs...)
		sort.Slice(attrs, func(i, j int) bool { return bytes.Compare(attrs[i], attrs[j]) < 0 })
		set := derWrap(tagSet, attrs...)
		h.Reset()
		h.Write(set)
		toSign = h.Sum(nil)
		signedAttrs = append([]byte{tagContext0}, set[1:]...)
	}
	sig, err := Sign(key, toSign, rand.Reader)
	if err != nil {
		return nil, err
	}

	version := 1
	var sid []byte
	if opt.BySubjectKeyID {
		if cert.SubjectKeyID == nil {
			return nil, errors.New("gost: certificate has no subjectKeyIdentifier")
		}
		version = 3
		sid = derWrap(tagContext0Prm, cert.SubjectKeyID)
	} else {
		issuer := cert.RawIssuer
		if opt.SignerIssuer != nil {
			issuer = opt.SignerIssuer
		}
		sid = derWrap(tagSequence, issuer, mustMarshal(cert.SerialNumber))
	}
	// OpenSSL writes the key algorithm OID here with NULL parameters;
	// banking.md 9.2 accepts that form and so does every verifier seen.
	sigAlg := derWrap(tagSequence, mustMarshal(keyOID(params)), []byte{tagNull, 0})
	signerInfo := derWrap(tagSequence, mustMarshal(version), sid, digestAlg, signedAttrs, sigAlg,
		derWrap(tagOctetString, sig))

	var certs []byte
	if !opt.NoCertificate {
		certs = derWrap(tagContext0, cert.Raw)
	}
	sdVersion := 1
	if version == 3 {
		sdVersion = 3
	}
	encapsulated := derWrap(tagSequence, mustMarshal(contentType))
	if opt.Attached {
		encapsulated = derWrap(tagSequence, mustMarshal(contentType), derWrap(tagContext0, derWrap(tagOctetString, content)))
	}
	sd := derWrap(tagSequence,
		mustMarshal(sdVersion),
		derWrap(tagSet, digestAlg),
		encapsulated,
		certs,
		derWrap(tagSet, signerInfo),
	)
	return derWrap(tagSequence, mustMarshal(oidSignedData), derWrap(tagContext0, sd)), nil
}

func attribute(oid asn1.ObjectIdentifier, value []byte) []byte {
	return derWrap(tagSequence, mustMarshal(oid), derWrap(tagSet, value))
}
