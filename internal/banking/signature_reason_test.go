package banking

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"partnerapi/internal/gost"
)

// reasonCase is one signature the verifying contours refuse, and the end
// of the SIGN_CHECK_EXCEPTION message, which names why.
type reasonCase struct {
	name   string
	cms    []byte
	reason string
}

// checkReasons sends each case under uuid in the test and production
// contours and wants SIGN_CHECK_EXCEPTION whose message names the reason.
func checkReasons(t *testing.T, certs certMap, uuid, digest string, cases []reasonCase) {
	t.Helper()
	p := Principal{OrgID: "org", UserID: "u1"}
	for _, contour := range []string{ContourTest, ContourProduction} {
		v := NewSignatureVerifier(contour, certs)
		for _, tc := range cases {
			t.Run(contour+"/"+tc.name, func(t *testing.T) {
				s := DigestSignature{Base64Encoded: base64.StdEncoding.EncodeToString(tc.cms), CertificateUUID: uuid}
				_, err := v.VerifyDocument(context.Background(), p, digest, []DigestSignature{s})
				var e *Error
				if KindOf(err) != KindSignCheck || !errors.As(err, &e) {
					t.Fatalf("%v, want SIGN_CHECK_EXCEPTION", err)
				}
				if !strings.Contains(e.Message, uuid) || !strings.HasSuffix(e.Message, tc.reason) {
					t.Fatalf("message %q, want the certificate and to end in %q", e.Message, tc.reason)
				}
			})
		}
	}
}

// TestSignatureRefusalNamesTheReason: a partner whose signature is refused
// learns which check failed, not only that it did (before, every case was
// the bare "did not verify"): another text signed (a trailing newline, or
// content carried with -nodetach that is not the digest), a SignerInfo
// naming another certificate, a value that is no SignedData, and a
// signature value that does not verify.
func TestSignatureRefusalNamesTheReason(t *testing.T) {
	const digest = "amount=100.00\ndate=2026-01-15"
	const uuid = "8e1f2a3b-4c5d-4e6f-8a7b-9c0d1e2f3a4b"
	a, other := newSigner(t, gost.TC26256A), newSigner(t, gost.TC26256A)
	certs := certMap{uuid: registered(uuid, a.cert)}
	sign := func(s signer, content string, opt gost.SignOptions) []byte {
		t.Helper()
		der, err := gost.SignDetachedWithOptions([]byte(content), s.cert, s.key, opt)
		if err != nil {
			t.Fatal(err)
		}
		return der
	}
	// The SignedData ends in the one SignerInfo's signature value: a
	// flipped last byte is a value that does not verify.
	flipped := sign(a, digest, gost.SignOptions{})
	flipped[len(flipped)-1] ^= 1
	// Any 64 bytes stand for the raw s‖r of `openssl dgst -sign`.
	raw, err := gost.Sign(a.key, make([]byte, 32), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	checkReasons(t, certs, uuid, digest, []reasonCase{
		{"trailing newline signed", sign(a, digest+"\n", gost.SignOptions{}), "(openssl cms -sign -binary)"},
		{"other text attached", sign(a, digest+"\n", gost.SignOptions{Attached: true}), "(openssl cms -sign -binary)"},
		{"another certificate's SignerInfo", sign(other, digest, gost.SignOptions{}), "не этот сертификат"},
		{"raw signature value, no CMS", raw, "openssl cms -sign -binary -outform DER"},
		{"signature value does not verify", flipped, "не соответствует ключу сертификата и подписанным данным"},
	})
}

// TestOpenSSLSignatureRefusalNamesTheReason is the oracle for the two
// mistakes a partner signing with OpenSSL makes: `openssl cms -sign`
// without -binary (the text canonicalised to CRLF line ends) and the raw
// value of `openssl dgst -sign` instead of a SignedData.
func TestOpenSSLSignatureRefusalNamesTheReason(t *testing.T) {
	o := newOpenSSLOracle(t)
	const digest = "amount=100.00\ndate=2026-01-15\npayeeName=ООО \"Ромашка\""
	const uuid = "9f2a3b4c-5d6e-4f7a-8b9c-0d1e2f3a4b5c"
	o.write("digest.txt", []byte(digest))
	run, read := o.run, o.read
	run("genpkey", "-engine", "gost", "-algorithm", "gost2012_256", "-pkeyopt", "paramset:A", "-out", "k.pem")
	run("req", "-engine", "gost", "-x509", "-new", "-key", "k.pem", "-subj", "/CN=reasons", "-days", "30", "-md_gost12_256", "-out", "c.pem")
	run("cms", "-engine", "gost", "-sign", "-in", "digest.txt", "-signer", "c.pem", "-inkey", "k.pem",
		"-outform", "DER", "-out", "text.p7s", "-md", "md_gost12_256")
	run("dgst", "-engine", "gost", "-md_gost12_256", "-sign", "k.pem", "-out", "raw.sig", "digest.txt")
	cert, err := gost.ParseCertificate(read("c.pem"))
	if err != nil {
		t.Fatal(err)
	}
	checkReasons(t, certMap{uuid: registered(uuid, cert)}, uuid, digest, []reasonCase{
		{"openssl cms -sign without -binary", read("text.p7s"), "(openssl cms -sign -binary)"},
		{"openssl dgst -sign", read("raw.sig"), "openssl cms -sign -binary -outform DER"},
	})
}
