package gost

import (
	"bytes"
	"crypto/subtle"
	"encoding/asn1"
	"errors"
	"fmt"
	"time"
)

// CMS (RFC 5652) detached SignedData with GOST algorithms (RFC 4490 and
// banking.md 9.2).

var (
	oidData          = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 1}
	oidSignedData    = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 2}
	oidContentType   = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 3}
	oidMessageDigest = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 4}
	oidSigningTime   = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 5}
)

// ErrSignerNotFound reports a SignedData whose signer has no certificate:
// none embedded matches the signer identifier and none was given, or the
// given certificate is not the signer's.
var ErrSignerNotFound = errors.New("gost: signer certificate not found")

// ErrContentMismatch reports a SignedData that signs other bytes than the
// content it is checked against: its messageDigest attribute, or the
// content it carries (-nodetach), differs. It wraps ErrBadSignature, and
// is told apart so that a caller can say the signer's key was fine but the
// text was not the one expected (a trailing newline, CRLF line ends, a
// signer that canonicalised the text as MIME without -binary).
var ErrContentMismatch = fmt.Errorf("%w: the signed content is not the given content", ErrBadSignature)

// The bounds of a SignedData, checked while it is parsed and before any
// signature is verified. Each SignerInfo costs a GOST verification and
// each certificate a parse (when the caller gives no certificate), all
// paid by whoever verifies, so a SignedData of thousands of them, a few
// hundred bytes apiece within a request body, would be CPU the client
// chooses. A real signer writes one SignerInfo (openssl cms -sign,
// CryptoPro): a digest signature of banking.md 9.1 is one certificate's,
// and a document needs at most two signatures (first and second), so two
// covers a SignedData that carries both. The certificates are the
// signer's and, with some tools, its chain up to the root: three or four
// for a qualified certificate, sixteen leaves room for cross-certified
// chains of both signers.
const (
	MaxSigners      = 2
	MaxCertificates = 16
)

// ErrTooManySigners and ErrTooManyCertificates report a SignedData beyond
// MaxSigners or MaxCertificates. They wrap ErrMalformed: callers that treat
// a malformed SignedData as a failed signature keep doing so.
var (
	ErrTooManySigners      = fmt.Errorf("%w: more than %d SignerInfos", ErrMalformed, MaxSigners)
	ErrTooManyCertificates = fmt.Errorf("%w: more than %d certificates", ErrMalformed, MaxCertificates)
)

// Signer describes one verified SignerInfo.
type Signer struct {
	Certificate    *Certificate
	SigningTime    time.Time // zero when the signingTime attribute is absent
	SignedAttrs    bool      // whether the signature covers signed attributes
	BySubjectKeyID bool      // whether the signer was identified by subjectKeyIdentifier
}

// VerifyDetached verifies a detached CMS SignedData (DER, or its base64 as
// carried in base64Encoded) over content, the exact digest text bytes. cert
// is the expected signer; when nil the embedded certificate is used. The
// error wraps ErrBadSignature, ErrMalformed, ErrNotGOST or ErrSignerNotFound.
//
// The SignedData must be over id-data (banking.md 9.2: eContentType data,
// and so the contentType attribute data): a digest text is plain data, and
// a SignedData of another content type was made for another purpose (a
// receipt, a timestamp token, an enveloped key), so its signature must not
// be taken over a digest text that happens to hash the same. Any other
// eContentType is malformed for this use (ErrMalformed).
func VerifyDetached(cmsDER []byte, content []byte, cert *Certificate) error {
	_, err := VerifyDetachedSigners(cmsDER, content, cert)
	return err
}

// VerifyDetachedSigners is VerifyDetached that also reports who signed and
// when. Every SignerInfo must verify; with cert given, every SignerInfo must
// name cert.
func VerifyDetachedSigners(cmsDER []byte, content []byte, cert *Certificate) ([]Signer, error) {
	sd, err := parseSignedData(decodeCMSInput(cmsDER))
	if err != nil {
		return nil, err
	}
	if !sd.eContentType.Equal(oidData) {
		return nil, malformed("eContentType %s is not id-data %s: not a signature over a digest text", sd.eContentType, oidData)
	}
	if content == nil {
		// A detached signature covers the content the caller gives and
		// nothing else: nil is empty content, not "whatever the SignedData
		// carries", so a digest text that arrives empty is never checked
		// against content the signer chose to embed.
		content = []byte{}
	}
	return sd.verifySigners(content, cert)
}

// verifySigners checks every SignerInfo of a parsed SignedData over content
// (its encapsulated content when content is nil). Its callers have pinned
// eContentType to id-data: VerifyDetachedSigners for a digest text, and
// ParseCertificateRequest for the request it encapsulates.
func (sd *signedData) verifySigners(content []byte, cert *Certificate) ([]Signer, error) {
	var err error
	if sd.eContent != nil {
		if content != nil && !bytes.Equal(content, sd.eContent) {
			return nil, fmt.Errorf("%w: attached content differs from the given content", ErrContentMismatch)
		}
		content = sd.eContent
	}
	if len(sd.signers) == 0 {
		return nil, fmt.Errorf("%w: SignedData has no signers", ErrMalformed)
	}
	var out []Signer
	var embedded []*Certificate // sd.certs(), once a signer needs them
	for _, si := range sd.signers {
		signerCert := cert
		if signerCert != nil {
			if !si.matches(signerCert) {
				return nil, fmt.Errorf("%w: signature is not by the given certificate (serial %s)", ErrSignerNotFound, signerCert.SerialHex)
			}
		} else {
			if embedded == nil {
				if embedded, err = sd.certs(); err != nil {
					return nil, err
				}
			}
			for _, c := range embedded {
				if si.matches(c) {
					signerCert = c
					break
				}
			}
			if signerCert == nil {
				return nil, ErrSignerNotFound
			}
		}
		if !containsOID(sd.digestOIDs, si.digestOID) {
			return nil, malformed("signer digest %s is missing from digestAlgorithms", si.digestOID)
		}
		s, err := si.verify(sd.eContentType, content, signerCert)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func containsOID(list []asn1.ObjectIdentifier, oid asn1.ObjectIdentifier) bool {
	for _, o := range list {
		if o.Equal(oid) {
			return true
		}
	}
	return false
}

type signedData struct {
	eContentType asn1.ObjectIdentifier
	eContent     []byte // nil when detached
	digestOIDs   []asn1.ObjectIdentifier
	// rawCerts are the DER certificates of the certificates field, parsed
	// only when the caller gives no certificate of its own (certs): a
	// server that verifies against the certificate it stores would
	// otherwise parse the signer's embedded copy on every request, which
	// cost a fifth of a signed create's signature check.
	rawCerts [][]byte
	signers  []signerInfo
}

// certs parses the embedded certificates, leaving out those that are not
// GOST ones (a foreign CA in the bag; only the signer's matters).
func (sd *signedData) certs() ([]*Certificate, error) {
	var out []*Certificate
	for _, der := range sd.rawCerts {
		cert, err := ParseCertificate(der)
		if err != nil {
			if errors.Is(err, ErrNotGOST) {
				continue
			}
			return nil, err
		}
		out = append(out, cert)
	}
	return out, nil
}

type signerInfo struct {
	issuer, serial []byte // issuerAndSerialNumber: raw Name and INTEGER content
	skid           []byte // subjectKeyIdentifier
	digestOID      asn1.ObjectIdentifier
	signedAttrs    *derElement
	sigOID         asn1.ObjectIdentifier
	signature      []byte
}

func parseSignedData(der []byte) (*signedData, error) {
	ci, n, err := parseTLV(der, 0)
	if err != nil {
		return nil, err
	}
	if ci.tag != tagSequence || n != len(der) {
		return nil, malformed("ContentInfo is not one SEQUENCE")
	}
	r := ci.children()
	el, err := r.read(tagOID)
	if err != nil {
		return nil, err
	}
	ct, err := el.oid()
	if err != nil {
		return nil, err
	}
	if !ct.Equal(oidSignedData) {
		return nil, malformed("content type %s is not signedData", ct)
	}
	wrapper, err := r.read(tagContext0)
	if err != nil {
		return nil, err
	}
	sdEl, err := wrapper.children().read(tagSequence)
	if err != nil {
		return nil, err
	}
	sr := sdEl.children()
	// The version numbers (RFC 5652 §5.1, and the SignerInfo's of §5.3) are
	// read but not checked: they are not signed, and OpenSSL with the GOST
	// engine verifies a SignedData whose versions contradict its sid or
	// content type, so refusing one would refuse what a real signer's
	// verifier takes and protect nothing.
	if _, err := sr.read(tagInteger); err != nil {
		return nil, err
	}
	digestAlgs, err := sr.read(tagSet)
	if err != nil {
		return nil, err
	}
	sd := &signedData{}
	dr := digestAlgs.children()
	for !dr.empty() {
		oid, _, err := dr.readAlgorithm()
		if err != nil {
			return nil, err
		}
		sd.digestOIDs = append(sd.digestOIDs, oid)
	}
	encap, err := sr.read(tagSequence)
	if err != nil {
		return nil, err
	}
	er := encap.children()
	if el, err = er.read(tagOID); err != nil {
		return nil, err
	}
	if sd.eContentType, err = el.oid(); err != nil {
		return nil, err
	}
	if ec, ok, err := er.optional(tagContext0); err != nil {
		return nil, err
	} else if ok {
		if sd.eContent, err = octetStringContent(ec); err != nil {
			return nil, err
		}
	}
	if certs, ok, err := sr.optional(tagContext0); err != nil {
		return nil, err
	} else if ok {
		cr := certs.children()
		for !cr.empty() {
			c, err := cr.next()
			if err != nil {
				return nil, err
			}
			if c.tag != tagSequence {
				continue // attribute certificates and other choices are not used
			}
			if len(sd.rawCerts) == MaxCertificates {
				return nil, ErrTooManyCertificates
			}
			sd.rawCerts = append(sd.rawCerts, c.full)
		}
	}
	if _, _, err := sr.optional(tagContext1); err != nil { // CRLs
		return nil, err
	}
	sis, err := sr.read(tagSet)
	if err != nil {
		return nil, err
	}
	sir := sis.children()
	for !sir.empty() {
		el, err := sir.read(tagSequence)
		if err != nil {
			return nil, err
		}
		if len(sd.signers) == MaxSigners {
			return nil, ErrTooManySigners
		}
		si, err := parseSignerInfo(el)
		if err != nil {
			return nil, err
		}
		sd.signers = append(sd.signers, si)
	}
	return sd, nil
}

// octetStringContent unwraps eContent [0] EXPLICIT OCTET STRING, including the
// BER constructed form some tools write for attached content.
func octetStringContent(wrapper derElement) ([]byte, error) {
	os, err := wrapper.children().next()
	if err != nil {
		return nil, err
	}
	switch os.tag {
	case tagOctetString:
		return append([]byte{}, os.content...), nil
	case tagOctetString | 0x20:
		var out []byte
		r := os.children()
		for !r.empty() {
			part, err := r.read(tagOctetString)
			if err != nil {
				return nil, err
			}
			out = append(out, part.content...)
		}
		return out, nil
	}
	return nil, malformed("eContent is not an OCTET STRING")
}

func parseSignerInfo(el derElement) (signerInfo, error) {
	var si signerInfo
	r := el.children()
	if _, err := r.read(tagInteger); err != nil {
		return si, err
	}
	sid, err := r.next()
	if err != nil {
		return si, err
	}
	switch sid.tag {
	case tagSequence:
		sr := sid.children()
		name, err := sr.read(tagSequence)
		if err != nil {
			return si, err
		}
		serial, err := sr.read(tagInteger)
		if err != nil {
			return si, err
		}
		si.issuer, si.serial = name.full, serial.content
	case tagContext0Prm:
		si.skid = sid.content
	default:
		return si, malformed("unknown SignerIdentifier tag 0x%02x", sid.tag)
	}
	if si.digestOID, _, err = r.readAlgorithm(); err != nil {
		return si, err
	}
	if attrs, ok, err := r.optional(tagContext0); err != nil {
		return si, err
	} else if ok {
		si.signedAttrs = &attrs
	}
	if si.sigOID, _, err = r.readAlgorithm(); err != nil {
		return si, err
	}
	sig, err := r.read(tagOctetString)
	if err != nil {
		return si, err
	}
	si.signature = sig.content
	return si, nil
}

func (si *signerInfo) matches(c *Certificate) bool {
	if si.skid != nil {
		// An empty identifier names no certificate, even one whose own
		// keyIdentifier is empty.
		return len(si.skid) > 0 && bytes.Equal(si.skid, c.SubjectKeyID)
	}
	// The client may encode the certificate's issuer and serial in forms
	// other than the certificate's own (name_match.go).
	return sameSerial(si.serial, c.SerialNumber) && sameName(si.issuer, c.RawIssuer)
}

func (si *signerInfo) verify(eContentType asn1.ObjectIdentifier, content []byte, cert *Certificate) (Signer, error) {
	res := Signer{Certificate: cert, SignedAttrs: si.signedAttrs != nil, BySubjectKeyID: si.skid != nil}
	params := cert.PublicKey.Params
	if !si.digestOID.Equal(digestOID(params)) {
		return res, fmt.Errorf("%w: digest algorithm %s does not fit a %d-bit key", ErrNotGOST, si.digestOID, params.size*8)
	}
	if !si.sigOID.Equal(keyOID(params)) && !si.sigOID.Equal(signatureOID(params)) {
		return res, fmt.Errorf("%w: signature algorithm %s does not fit a %d-bit key", ErrNotGOST, si.sigOID, params.size*8)
	}
	h := newHashFor(params)
	h.Write(content)
	contentDigest := h.Sum(nil)
	signedDigest := contentDigest
	if si.signedAttrs != nil {
		attrs, err := parseAttributes(*si.signedAttrs)
		if err != nil {
			return res, err
		}
		md, err := attrs.single(oidMessageDigest, "messageDigest")
		if err != nil {
			return res, err
		}
		var got []byte
		if rest, err := asn1.Unmarshal(md, &got); err != nil || len(rest) != 0 {
			return res, malformed("messageDigest is not an OCTET STRING")
		}
		if subtle.ConstantTimeCompare(got, contentDigest) != 1 {
			return res, fmt.Errorf("%w: messageDigest does not match the content", ErrContentMismatch)
		}
		ctv, err := attrs.single(oidContentType, "contentType")
		if err != nil {
			return res, err
		}
		var ct asn1.ObjectIdentifier
		if _, err := asn1.Unmarshal(ctv, &ct); err != nil || !ct.Equal(eContentType) {
			return res, fmt.Errorf("%w: contentType attribute does not match eContentType", ErrBadSignature)
		}
		if _, ok := attrs[oidSigningTime.String()]; ok {
			st, err := attrs.single(oidSigningTime, "signingTime")
			if err != nil {
				return res, err
			}
			if res.SigningTime, err = parseSigningTime(st); err != nil {
				return res, err
			}
		}
		// The signature covers the attributes re-tagged as a universal SET.
		der := append([]byte{tagSet}, si.signedAttrs.full[1:]...)
		h.Reset()
		h.Write(der)
		signedDigest = h.Sum(nil)
	}
	if err := Verify(cert.PublicKey, signedDigest, si.signature); err != nil {
		return res, err
	}
	return res, nil
}

// attributes maps each signed attribute's OID to the DER of its values.
type attributes map[string][][]byte

// single returns the one value of the attribute oid. RFC 5652 §11 gives
// contentType, messageDigest and signingTime exactly one value: a verifier
// that took the first of several would check one messageDigest while
// another reader of the same SignedData (an archive, the bank's own
// verifier) might take the second, so the signature would not say one
// thing about the content.
func (a attributes) single(oid asn1.ObjectIdentifier, name string) ([]byte, error) {
	values, ok := a[oid.String()]
	if !ok {
		return nil, malformed("signed attributes lack %s", name)
	}
	if len(values) != 1 {
		return nil, malformed("%s has %d values, not one", name, len(values))
	}
	return values[0], nil
}

// parseAttributes reads the signed attributes; an attribute that appears
// twice is malformed (RFC 5652 §5.3: the SET OF Attribute holds each
// single-instance attribute once, and a verifier must not choose between
// two messageDigests).
func parseAttributes(el derElement) (attributes, error) {
	if len(el.full) > 1 && el.full[1] == 0x80 {
		return nil, malformed("signed attributes use an indefinite length")
	}
	out := attributes{}
	r := el.children()
	for !r.empty() {
		a, err := r.read(tagSequence)
		if err != nil {
			return nil, err
		}
		ar := a.children()
		oidEl, err := ar.read(tagOID)
		if err != nil {
			return nil, err
		}
		oid, err := oidEl.oid()
		if err != nil {
			return nil, err
		}
		vals, err := ar.read(tagSet)
		if err != nil {
			return nil, err
		}
		if !ar.empty() {
			return nil, malformed("attribute %s has data after its values", oid)
		}
		var values [][]byte
		vr := vals.children()
		for !vr.empty() {
			v, err := vr.next()
			if err != nil {
				return nil, err
			}
			values = append(values, v.full)
		}
		if len(values) == 0 {
			return nil, malformed("attribute %s has no value", oid)
		}
		if _, dup := out[oid.String()]; dup {
			return nil, malformed("attribute %s appears twice", oid)
		}
		out[oid.String()] = values
	}
	return out, nil
}

// parseSigningTime reads a signingTime value as RFC 5652 §11.3 writes it:
// UTCTime YYMMDDHHMMSSZ for dates from 1950 to 2049, GeneralizedTime
// YYYYMMDDHHMMSSZ (no fraction) for the others, always UTC with seconds.
// encoding/asn1 also takes offsets and UTCTime without seconds, which no
// conforming signer writes; a signing time the caller reports is taken only
// in the one form.
func parseSigningTime(der []byte) (time.Time, error) {
	el, n, err := parseTLV(der, 0)
	if err != nil || n != len(der) {
		return time.Time{}, malformed("signingTime is not one element")
	}
	s := string(el.content)
	digitsZ := func(n int) bool {
		if len(s) != n+1 || s[n] != 'Z' {
			return false
		}
		for _, c := range s[:n] {
			if c < '0' || c > '9' {
				return false
			}
		}
		return true
	}
	switch el.tag {
	case tagUTCTime:
		if !digitsZ(12) {
			break
		}
		century := "20"
		if s[0] >= '5' { // RFC 5280 §4.1.2.5.1: YY of 50 or more is 19YY
			century = "19"
		}
		t, err := time.Parse("20060102150405Z", century+s)
		if err != nil {
			break
		}
		return t, nil
	case tagGenTime:
		if !digitsZ(14) {
			break
		}
		t, err := time.Parse("20060102150405Z", s)
		if err != nil || (t.Year() >= 1950 && t.Year() <= 2049) {
			break
		}
		return t, nil
	}
	return time.Time{}, malformed("signingTime %q is not UTCTime YYMMDDHHMMSSZ (1950-2049) or GeneralizedTime YYYYMMDDHHMMSSZ", s)
}
