package gost

import (
	"encoding/asn1"
	"errors"
	"testing"
	"time"
)

// attributeValues is an Attribute of several values, which RFC 5652 §11
// forbids for contentType, messageDigest and signingTime.
func attributeValues(oid asn1.ObjectIdentifier, values ...[]byte) []byte {
	return derWrap(tagSequence, mustMarshal(oid), derWrap(tagSet, values...))
}

// TestVerifySignedAttributes signs the content over signed attributes no
// real signer writes (signWithAttributes, the signing code of
// SignDetached) and checks what RFC 5652 §5.3, §5.4 and §11 ask of them:
// contentType and messageDigest present, once, with one value each,
// matching eContentType and the content's Streebog digest; signingTime, when
// present, one value, UTCTime YYMMDDHHMMSSZ for 1950-2049 and
// GeneralizedTime YYYYMMDDHHMMSSZ otherwise.
func TestVerifySignedAttributes(t *testing.T) {
	content := []byte("amount=1.00\ndate=2026-01-15")
	key, cert := testKeyAndCert(t, TC26256A)
	h := newHashFor(key.Params)
	h.Write(content)
	digest := mustMarshal(h.Sum(nil))
	h512 := newHashFor(TC26512A)
	h512.Write(content)
	data := mustMarshal(oidData)
	when := mustMarshal(time.Date(2026, 2, 1, 10, 0, 0, 0, time.UTC))
	ct := attribute(oidContentType, data)
	md := attribute(oidMessageDigest, digest)
	st := attribute(oidSigningTime, when)
	rawTime := func(tag byte, s string) []byte { return attribute(oidSigningTime, derWrap(tag, []byte(s))) }
	const utcTime, generalizedTime = tagUTCTime, tagGenTime
	for _, tc := range []struct {
		name  string
		attrs [][]byte
		want  error // nil: verifies
	}{
		{"as SignDetached writes them", [][]byte{ct, st, md}, nil},
		{"without signingTime", [][]byte{ct, md}, nil},
		{"UTCTime 1950", [][]byte{ct, md, rawTime(utcTime, "500101000000Z")}, nil},
		{"GeneralizedTime 2050", [][]byte{ct, md, rawTime(generalizedTime, "20500101000000Z")}, nil},
		{"GeneralizedTime 1949", [][]byte{ct, md, rawTime(generalizedTime, "19491231235959Z")}, nil},

		{"no messageDigest", [][]byte{ct, st}, ErrMalformed},
		{"no contentType", [][]byte{st, md}, ErrMalformed},
		{"messageDigest twice", [][]byte{ct, st, md, attribute(oidMessageDigest, mustMarshal(h512.Sum(nil)))}, ErrMalformed},
		{"messageDigest of two values", [][]byte{ct, st, attributeValues(oidMessageDigest, digest, digest)}, ErrMalformed},
		{"messageDigest of no value", [][]byte{ct, st, attributeValues(oidMessageDigest)}, ErrMalformed},
		{"contentType of two values", [][]byte{attributeValues(oidContentType, data, data), st, md}, ErrMalformed},
		{"signingTime of two values", [][]byte{ct, md, attributeValues(oidSigningTime, when, when)}, ErrMalformed},
		{"signingTime with data after its values", [][]byte{ct, md, derWrap(tagSequence, mustMarshal(oidSigningTime), derWrap(tagSet, when), []byte{tagNull, 0})}, ErrMalformed},
		{"signingTime twice", [][]byte{ct, md, st, rawTime(utcTime, "260201100001Z")}, ErrMalformed},
		{"messageDigest of another content", [][]byte{ct, st, attribute(oidMessageDigest, mustMarshal(make([]byte, 32)))}, ErrBadSignature},
		{"messageDigest Streebog-512", [][]byte{ct, st, attribute(oidMessageDigest, mustMarshal(h512.Sum(nil)))}, ErrBadSignature},
		{"contentType not eContentType", [][]byte{attribute(oidContentType, mustMarshal(oidSignedData)), st, md}, ErrBadSignature},

		{"signingTime UTCTime with an offset", [][]byte{ct, md, rawTime(utcTime, "260201130000+0300")}, ErrMalformed},
		{"signingTime UTCTime without seconds", [][]byte{ct, md, rawTime(utcTime, "2602011000Z")}, ErrMalformed},
		{"signingTime UTCTime not a date", [][]byte{ct, md, rawTime(utcTime, "261301100000Z")}, ErrMalformed},
		{"signingTime GeneralizedTime for 2026", [][]byte{ct, md, rawTime(generalizedTime, "20260201100000Z")}, ErrMalformed},
		{"signingTime GeneralizedTime fractional", [][]byte{ct, md, rawTime(generalizedTime, "20500101000000.5Z")}, ErrMalformed},
		{"signingTime an INTEGER", [][]byte{ct, md, attribute(oidSigningTime, mustMarshal(1769940000))}, ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			der, err := signWithAttributes(content, cert, key, SignOptions{}, oidData, tc.attrs)
			if err != nil {
				t.Fatal(err)
			}
			for _, signer := range []*Certificate{cert, nil} {
				err := VerifyDetached(der, content, signer)
				if (tc.want == nil && err != nil) || (tc.want != nil && !errors.Is(err, tc.want)) {
					t.Fatalf("signer given %v: %v, want %v", signer != nil, err, tc.want)
				}
			}
		})
	}
}

// TestVerifyEmptySubjectKeyID: an empty subjectKeyIdentifier names no
// certificate, not every certificate whose keyIdentifier extension is empty
// too (a CA's encoding slip that crypto/x509 parses as a non-nil empty
// SubjectKeyId): the SignerInfo must select the certificate it is verified
// with by an identifier that says which one.
func TestVerifyEmptySubjectKeyID(t *testing.T) {
	content := []byte("amount=1.00")
	key, cert := testKeyAndCert(t, TC26256A)
	empty := *cert
	empty.SubjectKeyID = []byte{}
	der, err := SignDetachedWithOptions(content, &empty, key, SignOptions{BySubjectKeyID: true, NoCertificate: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifyDetached(der, content, &empty); !errors.Is(err, ErrSignerNotFound) {
		t.Fatalf("%v, want ErrSignerNotFound", err)
	}
}
