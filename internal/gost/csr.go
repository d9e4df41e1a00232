package gost

import (
	"bytes"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"errors"
	"fmt"
	"unicode/utf8"
)

// CertificateRequest is a parsed PKCS#10 certificate request (RFC 2986)
// for a GOST R 34.10-2012 key. crypto/x509 cannot check its signature (it
// knows no GOST algorithm), so the request is read element by element here.
type CertificateRequest struct {
	Raw        []byte // DER of the CertificationRequest
	RawTBS     []byte // DER of CertificationRequestInfo, what the signature covers
	RawSubject []byte // DER Name
	Subject    string // RFC 2253 form
	PublicKey  *PublicKey
	// BicryptID is the key's Bicrypt identifier from the request's
	// extension 1.2.643.3.123.3.1, which the provider's requests carry and
	// the API repeats as pkcs10.bicryptId; "" when the request has none.
	BicryptID string

	signatureOID asn1.ObjectIdentifier
	signature    []byte // s‖r
}

var (
	oidExtensionRequest = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 14}
	oidBicryptID        = asn1.ObjectIdentifier{1, 2, 643, 3, 123, 3, 1}
)

// ErrNotCSR reports input that is neither a PKCS#10 request nor a CMS
// SignedData carrying one.
var ErrNotCSR = errors.New("gost: not a certificate request")

// ParseCertificateRequest reads a PKCS#10 request given as DER, PEM
// ("CERTIFICATE REQUEST" or "NEW CERTIFICATE REQUEST") or base64 DER, or a
// CMS SignedData (DER, PEM or base64) whose encapsulated content is such a
// request, the form the API's pkcs10.cms field is named after. When the
// SignedData has signers whose certificates it carries, their signatures
// over the request must verify; the request's own signature is checked by
// CheckSignature, not here.
func ParseCertificateRequest(data []byte) (*CertificateRequest, error) {
	der, err := decodeRequestInput(data)
	if err != nil {
		return nil, err
	}
	if isSignedData(der) {
		sd, err := parseSignedData(der)
		if err != nil {
			return nil, err
		}
		// The request is encapsulated as plain data (openssl cms -sign
		// -nodetach, RFC 5652 §5.2's id-data for content of no CMS type of
		// its own). A SignedData of another content type is a timestamp
		// token, a receipt or the like, signed for that purpose, not an
		// envelope around a request, whatever bytes it carries.
		if !sd.eContentType.Equal(oidData) {
			return nil, fmt.Errorf("%w: SignedData content type %s is not id-data %s", ErrNotCSR, sd.eContentType, oidData)
		}
		if sd.eContent == nil {
			return nil, fmt.Errorf("%w: SignedData without encapsulated content", ErrNotCSR)
		}
		if len(sd.signers) > 0 && len(sd.rawCerts) > 0 {
			if _, err := sd.verifySigners(nil, nil); err != nil {
				return nil, fmt.Errorf("CMS around the request: %w", err)
			}
		}
		inner, err := decodeRequestInput(sd.eContent)
		if err != nil {
			return nil, err
		}
		return parseCSR(inner)
	}
	return parseCSR(der)
}

// decodeRequestInput turns PEM (when the input opens with its boundary,
// pemInput) or base64 into DER; DER passes through as it is. DER is recognised before anything is trimmed: it ends with a
// signature, whose last bytes may be any value, a tab or a newline too,
// and trimming those cut one request in forty short.
func decodeRequestInput(in []byte) ([]byte, error) {
	if len(in) > 0 && in[0] == tagSequence {
		return in, nil
	}
	trimmed := bytes.TrimSpace(in)
	if block, isPEM := pemInput(trimmed); isPEM {
		if block == nil {
			return nil, fmt.Errorf("%w: opens as PEM but is not one PEM block", ErrNotCSR)
		}
		switch block.Type {
		case "CERTIFICATE REQUEST", "NEW CERTIFICATE REQUEST", "CMS", "PKCS7":
			return block.Bytes, nil
		}
		return nil, fmt.Errorf("%w: PEM block %q", ErrNotCSR, block.Type)
	}
	// Base64 as JSON carries it, possibly wrapped over several lines.
	compact := bytes.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == ' ' || r == '\t' {
			return -1
		}
		return r
	}, trimmed)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding} {
		if b, err := enc.DecodeString(string(compact)); err == nil && len(b) > 0 {
			return b, nil
		}
	}
	return nil, fmt.Errorf("%w: neither DER, PEM nor base64", ErrNotCSR)
}

// isSignedData reports whether der opens as a ContentInfo of type
// signedData, which a CertificationRequest (a SEQUENCE opening with a
// SEQUENCE) never does.
func isSignedData(der []byte) bool {
	el, _, err := parseTLV(der, 0)
	if err != nil || el.tag != tagSequence {
		return false
	}
	first, err := el.children().next()
	if err != nil || first.tag != tagOID {
		return false
	}
	oid, err := first.oid()
	return err == nil && oid.Equal(oidSignedData)
}

// parseCSR reads CertificationRequest ::= SEQUENCE { certificationRequestInfo,
// signatureAlgorithm, signature BIT STRING }.
func parseCSR(der []byte) (*CertificateRequest, error) {
	el, n, err := parseTLV(der, 0)
	if err != nil {
		return nil, err
	}
	if el.tag != tagSequence || n != len(der) {
		return nil, fmt.Errorf("%w: not one SEQUENCE", ErrNotCSR)
	}
	r := el.children()
	info, err := r.read(tagSequence)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotCSR, err)
	}
	sigOID, _, err := r.readAlgorithm()
	if err != nil {
		return nil, err
	}
	bits, err := r.read(tagBitString)
	if err != nil {
		return nil, err
	}
	if !r.empty() {
		return nil, malformed("data after the request's signature")
	}
	if len(bits.content) < 1 || bits.content[0] != 0 {
		return nil, malformed("signature BIT STRING has unused bits")
	}
	csr := &CertificateRequest{Raw: der, RawTBS: info.full, signatureOID: sigOID, signature: bits.content[1:]}

	ir := info.children()
	version, err := ir.read(tagInteger)
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(version.content, []byte{0}) {
		return nil, fmt.Errorf("%w: version %x, want 0 (v1)", ErrNotCSR, version.content)
	}
	subject, err := ir.read(tagSequence)
	if err != nil {
		return nil, err
	}
	csr.RawSubject = subject.full
	var rdn pkix.RDNSequence
	if rest, err := asn1.Unmarshal(subject.full, &rdn); err != nil || len(rest) != 0 {
		return nil, malformed("request subject is not a Name")
	}
	var name pkix.Name
	name.FillFromRDNSequence(&rdn)
	csr.Subject = name.String()
	spki, err := ir.read(tagSequence)
	if err != nil {
		return nil, err
	}
	if csr.PublicKey, err = ParsePublicKey(spki.full); err != nil {
		return nil, err
	}
	if attrs, ok, err := ir.optional(tagContext0); err != nil {
		return nil, err
	} else if ok {
		if csr.BicryptID, err = bicryptID(attrs); err != nil {
			return nil, err
		}
	}
	if !ir.empty() {
		return nil, malformed("data after the request's attributes")
	}
	return csr, nil
}

// bicryptID finds extension 1.2.643.3.123.3.1 in the extensionRequest
// attribute: attributes [0] SET OF Attribute { type, values SET OF ANY }.
func bicryptID(attrs derElement) (string, error) {
	ar := attrs.children()
	for !ar.empty() {
		attr, err := ar.read(tagSequence)
		if err != nil {
			return "", err
		}
		r := attr.children()
		t, err := r.read(tagOID)
		if err != nil {
			return "", err
		}
		oid, err := t.oid()
		if err != nil {
			return "", err
		}
		values, err := r.read(tagSet)
		if err != nil {
			return "", err
		}
		if !oid.Equal(oidExtensionRequest) {
			continue
		}
		vr := values.children()
		for !vr.empty() {
			exts, err := vr.read(tagSequence)
			if err != nil {
				return "", err
			}
			var list []pkix.Extension
			if rest, err := asn1.Unmarshal(exts.full, &list); err != nil || len(rest) != 0 {
				return "", malformed("extensionRequest is not a list of extensions")
			}
			for _, e := range list {
				if !e.Id.Equal(oidBicryptID) {
					continue
				}
				var raw asn1.RawValue
				if rest, err := asn1.Unmarshal(e.Value, &raw); err != nil || len(rest) != 0 || raw.Class != asn1.ClassUniversal || !utf8.Valid(raw.Bytes) {
					return "", malformed("Bicrypt identifier is not a string")
				}
				return string(raw.Bytes), nil
			}
		}
	}
	return "", nil
}

// CheckSignature verifies the request's signature with its own public key,
// the proof that whoever sent it holds the private key.
func (c *CertificateRequest) CheckSignature() error {
	want := signatureOID(c.PublicKey.Params)
	if !c.signatureOID.Equal(want) {
		return fmt.Errorf("%w: request signed with %s, its key needs %s", ErrBadSignature, c.signatureOID, want)
	}
	h := newHashFor(c.PublicKey.Params)
	h.Write(c.RawTBS)
	return Verify(c.PublicKey, h.Sum(nil), c.signature)
}
