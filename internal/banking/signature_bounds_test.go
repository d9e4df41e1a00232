package banking

import (
	"bytes"
	"context"
	"encoding/asn1"
	"encoding/base64"
	"slices"
	"testing"
	"time"

	"partnerapi/internal/gost"
)

// asn1Children splits the contents of a constructed element.
func asn1Children(t *testing.T, b []byte) []asn1.RawValue {
	t.Helper()
	var out []asn1.RawValue
	for len(b) > 0 {
		var v asn1.RawValue
		rest, err := asn1.Unmarshal(b, &v)
		if err != nil {
			t.Fatal(err)
		}
		out, b = append(out, v), rest
	}
	return out
}

// asn1Wrap encodes a constructed element of class and tag around parts.
func asn1Wrap(t *testing.T, class, tag int, parts ...[]byte) []byte {
	t.Helper()
	b, err := asn1.Marshal(asn1.RawValue{Class: class, Tag: tag, IsCompound: true, Bytes: bytes.Join(parts, nil)})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// repeatSigned rebuilds the detached SignedData cms, made by
// gost.SignDetached (one SignerInfo, the signer's certificate), with
// its SignerInfo written signers times and its certificate certs times:
// each copy a valid signature that a verifier without a bound checks
// again.
func repeatSigned(t *testing.T, cms []byte, signers, certs int) []byte {
	t.Helper()
	ci := asn1Children(t, cms)
	outer := asn1Children(t, ci[0].FullBytes)[0]
	parts := asn1Children(t, outer.Bytes)    // contentType, [0] content
	sd := asn1Children(t, parts[1].Bytes)[0] // SignedData
	fields := asn1Children(t, sd.Bytes)      // version, digestAlgorithms, encapContentInfo, [0] certificates, signerInfos
	cert, si := fields[3].Bytes, fields[4].Bytes
	rebuilt := [][]byte{fields[0].FullBytes, fields[1].FullBytes, fields[2].FullBytes,
		asn1Wrap(t, asn1.ClassContextSpecific, 0, slices.Repeat([][]byte{cert}, certs)...),
		asn1Wrap(t, asn1.ClassUniversal, asn1.TagSet, slices.Repeat([][]byte{si}, signers)...)}
	return asn1Wrap(t, asn1.ClassUniversal, asn1.TagSequence, parts[0].FullBytes,
		asn1Wrap(t, asn1.ClassContextSpecific, 0, asn1Wrap(t, asn1.ClassUniversal, asn1.TagSequence, rebuilt...)))
}

// TestSignatureCMSBounds: a digestSignatures item whose CMS carries more
// SignerInfos or certificates than gost allows is 400 VALIDATION_FAULT on
// that item's base64Encoded, answered before any signature in it is
// verified, while one within the bounds is verified as before. The copies
// are valid signatures of the registered key over the digest text, what
// a client holding its own key can send: without the bound each of the
// thousands cost the server a GOST verification.
func TestSignatureCMSBounds(t *testing.T) {
	const digest = "date=2026-01-01\namount=100.00\n"
	p := Principal{OrgID: "org", UserID: "u1"}
	a, b := newSigner(t, gost.TC26256A), newSigner(t, gost.TC26256A)
	certs := certMap{
		uFirst:  {UUID: uFirst, UserID: "u1", OrgID: "org", DER: a.cert.Raw, Role: RoleFirst, Active: true},
		uSecond: {UUID: uSecond, UserID: "u1", OrgID: "org", DER: b.cert.Raw, Role: RoleSecond, Active: true},
	}
	cmsOf := func(s DigestSignature) []byte {
		der, err := base64.StdEncoding.DecodeString(s.Base64Encoded)
		if err != nil {
			t.Fatal(err)
		}
		return der
	}
	firstCMS, secondCMS := cmsOf(a.sign(t, uFirst, digest)), cmsOf(b.sign(t, uSecond, digest))
	item := func(uuid string, cms []byte, signers, certs int) DigestSignature {
		return DigestSignature{CertificateUUID: uuid, Base64Encoded: base64.StdEncoding.EncodeToString(repeatSigned(t, cms, signers, certs))}
	}
	v := NewSignatureVerifier(ContourProduction, certs)
	for _, c := range []struct {
		name  string
		sigs  []DigestSignature
		field string // "" when the set verifies
		check string
	}{
		{"one signer each", []DigestSignature{item(uFirst, firstCMS, 1, 1), item(uSecond, secondCMS, 1, 1)}, "", ""},
		{"two SignerInfos", []DigestSignature{item(uFirst, firstCMS, gost.MaxSigners, 1)}, "", ""},
		{"three SignerInfos", []DigestSignature{item(uFirst, firstCMS, gost.MaxSigners+1, 1)}, "digestSignatures[0].base64Encoded", "at most 2 SignerInfos"},
		{"2500 SignerInfos in the second (a 1 MiB body)", []DigestSignature{item(uFirst, firstCMS, 1, 1), item(uSecond, secondCMS, 2500, 1)},
			"digestSignatures[1].base64Encoded", "at most 2 SignerInfos"},
		{"certificates at the bound", []DigestSignature{item(uFirst, firstCMS, 1, gost.MaxCertificates)}, "", ""},
		{"a thousand certificates", []DigestSignature{item(uFirst, firstCMS, 1, 1000)}, "digestSignatures[0].base64Encoded", "at most 16 certificates"},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			_, err := v.Verify(context.Background(), p, digest, c.sigs)
			took := time.Since(start)
			if c.field == "" {
				if err != nil {
					t.Fatalf("err %v", err)
				}
				return
			}
			e, ok := err.(*Error)
			if !ok || e.Kind != KindValidation || !slices.Equal(e.FieldNames, []string{c.field}) || !slices.Equal(e.Checks, []string{c.check}) || e.Message == "" {
				t.Fatalf("err %#v after %v, want VALIDATION_FAULT on %s (%s)", err, took, c.field, c.check)
			}
			t.Logf("%d bytes of Base64 refused in %v: %s", len(c.sigs[len(c.sigs)-1].Base64Encoded), took, e.Message)
		})
	}
}
