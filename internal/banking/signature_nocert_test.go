package banking

import (
	"context"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"testing"
	"time"

	"partnerapi/internal/gost"
)

// nocertCase is one detached CMS without a certificate, sent under the
// registered certificate uuid, and whether the verifying contours take it.
type nocertCase struct {
	name string
	cms  []byte
	uuid string
	ok   bool
}

// checkNocert runs the cases through the verifying contours: a CMS whose
// SignedData carries no certificate is verified with the certificate
// certificateUuid names, once its SignerInfo's sid names that certificate;
// otherwise it is SIGN_CHECK_EXCEPTION.
func checkNocert(t *testing.T, certs certMap, digest string, cases []nocertCase) {
	t.Helper()
	p := Principal{OrgID: "org", UserID: "u1"}
	for _, contour := range []string{ContourTest, ContourProduction} {
		v := NewSignatureVerifier(contour, certs)
		for _, tc := range cases {
			t.Run(contour+"/"+tc.name, func(t *testing.T) {
				s := DigestSignature{Base64Encoded: base64.StdEncoding.EncodeToString(tc.cms), CertificateUUID: tc.uuid}
				set, err := v.VerifyDocument(context.Background(), p, digest, []DigestSignature{s})
				if tc.ok && (err != nil || !set.Complete()) {
					t.Fatalf("refused: %+v %v", set, err)
				}
				if !tc.ok && KindOf(err) != KindSignCheck {
					t.Fatalf("%+v %v, want SIGN_CHECK_EXCEPTION", set, err)
				}
			})
		}
	}
}

// registered is a sole-authority certificate of user u1 under uuid.
func registered(uuid string, cert *gost.Certificate) Certificate {
	return Certificate{UUID: uuid, UserID: "u1", OrgID: "org", DER: cert.Raw, Role: RoleSoleAuthority, Active: true}
}

// TestVerifyCMSWithoutCertificate builds CMS signatures without the
// signer's certificate (what `openssl cms -sign -nocerts` and
// CryptoPro-based clients send) in Go: the signer named by
// issuerAndSerialNumber or by subjectKeyIdentifier. A sid naming another
// certificate is refused even when that certificate has the same key (a
// reissued certificate, whose signature would verify with the registered
// key): the signature must say it is by the certificate it is sent under.
func TestVerifyCMSWithoutCertificate(t *testing.T) {
	const digest = "amount=100.00\ndate=2026-01-15"
	a, other := newSigner(t, gost.TC26256A), newSigner(t, gost.TC26256A)
	reissued, err := gost.SelfSignedCertificate(a.key, "signer", time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	const uuid = "5b0c6d1e-2f3a-4b4c-8d5e-6f7a8b9c0d1e"
	certs := certMap{uuid: registered(uuid, a.cert)}
	sign := func(cert *gost.Certificate, key *gost.PrivateKey, content string, opt gost.SignOptions) []byte {
		t.Helper()
		opt.NoCertificate = true
		der, err := gost.SignDetachedWithOptions([]byte(content), cert, key, opt)
		if err != nil {
			t.Fatal(err)
		}
		return der
	}
	checkNocert(t, certs, digest, []nocertCase{
		{"issuerAndSerialNumber", sign(a.cert, a.key, digest, gost.SignOptions{}), uuid, true},
		{"subjectKeyIdentifier", sign(a.cert, a.key, digest, gost.SignOptions{BySubjectKeyID: true}), uuid, true},
		{"no signed attributes", sign(a.cert, a.key, digest, gost.SignOptions{NoSignedAttributes: true}), uuid, true},
		{"another digest", sign(a.cert, a.key, digest+" ", gost.SignOptions{}), uuid, false},
		{"sid names another certificate", sign(other.cert, other.key, digest, gost.SignOptions{}), uuid, false},
		{"sid names another key", sign(other.cert, other.key, digest, gost.SignOptions{BySubjectKeyID: true}), uuid, false},
		{"sid names a reissued certificate of the same key", sign(reissued, a.key, digest, gost.SignOptions{}), uuid, false},
		// The certificate's issuer is CN=signer as a PrintableString;
		// clients may re-encode it (RFC 5280 §7.1 compares the Names).
		{"issuer re-encoded as UTF8String, other case and spaces", sign(a.cert, a.key, digest, gost.SignOptions{SignerIssuer: cnName(t, asn1.TagUTF8String, " SIGNER ")}), uuid, true},
		{"issuer naming another CN", sign(a.cert, a.key, digest, gost.SignOptions{SignerIssuer: cnName(t, asn1.TagUTF8String, "signer2")}), uuid, false},
	})
}

// cnName encodes the Name CN=value with the value in the given string type.
func cnName(t *testing.T, tag int, value string) []byte {
	t.Helper()
	der, err := asn1.Marshal(pkix.RDNSequence{{{Type: asn1.ObjectIdentifier{2, 5, 4, 3}, Value: asn1.RawValue{Tag: tag, Bytes: []byte(value)}}}})
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// TestVerifyOpenSSLCMSWithoutCertificate is the oracle: OpenSSL's GOST
// engine signs the digest with -nocerts (issuerAndSerialNumber, and with
// -keyid subjectKeyIdentifier), and the verifying contours take it under
// the registered certificate; under a second certificate OpenSSL issued for
// the same key, whose serial the sid does not name, they refuse it.
func TestVerifyOpenSSLCMSWithoutCertificate(t *testing.T) {
	o := newOpenSSLOracle(t)
	const digest = "amount=100.00\ndate=2026-01-15\npayeeName=ООО \"Ромашка\""
	o.write("digest.txt", []byte(digest))
	run, read := o.run, o.read
	run("genpkey", "-engine", "gost", "-algorithm", "gost2012_256", "-pkeyopt", "paramset:A", "-out", "k.pem")
	for _, c := range []string{"c.pem", "c2.pem"} {
		run("req", "-engine", "gost", "-x509", "-new", "-key", "k.pem", "-subj", "/CN=nocerts", "-days", "30", "-md_gost12_256", "-out", c)
	}
	sign := func(out string, extra ...string) []byte {
		run(append([]string{"cms", "-engine", "gost", "-sign", "-binary", "-nosmimecap", "-nocerts", "-in", "digest.txt",
			"-signer", "c.pem", "-inkey", "k.pem", "-outform", "DER", "-out", out, "-md", "md_gost12_256"}, extra...)...)
		return read(out)
	}
	serial, keyid := sign("serial.p7s"), sign("keyid.p7s", "-keyid")
	var parsed [2]*gost.Certificate
	for i, name := range []string{"c.pem", "c2.pem"} {
		c, err := gost.ParseCertificate(read(name))
		if err != nil {
			t.Fatal(err)
		}
		parsed[i] = c
	}
	if parsed[0].SerialHex == parsed[1].SerialHex {
		t.Fatal("OpenSSL gave both certificates one serial")
	}
	const uuid, uuid2 = "6c1d7e2f-3a4b-4c5d-9e6f-7a8b9c0d1e2f", "7d2e8f3a-4b5c-4d6e-8f7a-8b9c0d1e2f3a"
	certs := certMap{uuid: registered(uuid, parsed[0]), uuid2: registered(uuid2, parsed[1])}
	checkNocert(t, certs, digest, []nocertCase{
		{"-nocerts", serial, uuid, true},
		{"-nocerts -keyid", keyid, uuid, true},
		// The subjectKeyIdentifier names the key, which both certificates
		// share, so it names the second certificate as well.
		{"-nocerts -keyid, the same key's other certificate", keyid, uuid2, true},
		{"-nocerts, the same key's other certificate", serial, uuid2, false},
	})
}
