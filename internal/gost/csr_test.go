package gost

import (
	"bytes"
	"crypto/rand"
	"encoding/asn1"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The golden requests were made with the OpenSSL GOST engine from the key
// of openssl-256-cpA.key.pem:
//
//	openssl req -engine gost -new -key openssl-256-cpA.key.pem -subj "/CN=openssl CSR/O=Test Bank" -md_gost12_256 -outform DER -out openssl-256-cpA.csr.der
//	openssl cms -engine gost -sign -nodetach -binary -nosmimecap -in openssl-256-cpA.csr.der -signer openssl-256-cpA.cert.pem -inkey openssl-256-cpA.key.pem -outform DER -out openssl-256-cpA.csr.p7s -md md_gost12_256
func TestParseCertificateRequestGolden(t *testing.T) {
	cert, err := ParseCertificate(readTestdata(t, "openssl-256-cpA.cert.pem"))
	if err != nil {
		t.Fatal(err)
	}
	der := readTestdata(t, "openssl-256-cpA.csr.der")
	forms := map[string][]byte{
		"DER":    der,
		"PEM":    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
		"base64": []byte(base64.StdEncoding.EncodeToString(der)),
		"CMS":    readTestdata(t, "openssl-256-cpA.csr.p7s"),
		"CMS64":  []byte(base64.StdEncoding.EncodeToString(readTestdata(t, "openssl-256-cpA.csr.p7s"))),
	}
	for name, in := range forms {
		req, err := ParseCertificateRequest(in)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := req.CheckSignature(); err != nil {
			t.Fatalf("%s: OpenSSL's request does not verify: %v", name, err)
		}
		if !req.PublicKey.Equal(cert.PublicKey) {
			t.Fatalf("%s: the request's key is not the key's", name)
		}
		if req.Subject != "CN=openssl CSR,O=Test Bank" {
			t.Fatalf("%s: subject %q", name, req.Subject)
		}
	}
}

func TestCertificateRequestRoundTripAndTamper(t *testing.T) {
	key, err := GenerateKey(TC26256A, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := CreateCertificateRequest(key, "Иванов Иван", "A00ESYFHs.ИВАНОВ И И")
	if err != nil {
		t.Fatal(err)
	}
	req, err := ParseCertificateRequest(der)
	if err != nil {
		t.Fatal(err)
	}
	if err := req.CheckSignature(); err != nil {
		t.Fatal(err)
	}
	if req.BicryptID != "A00ESYFHs.ИВАНОВ И И" || req.Subject != "CN=Иванов Иван" || !req.PublicKey.Equal(key.Public()) {
		t.Fatalf("parsed %+v", req)
	}
	// One flipped bit of the subject (inside what is signed) or of the
	// signature must fail the check.
	for _, at := range []int{strings.Index(string(der), "Иванов"), len(der) - 3} {
		bad := append([]byte(nil), der...)
		bad[at] ^= 0x01
		r, err := ParseCertificateRequest(bad)
		if err != nil {
			continue
		}
		if err := r.CheckSignature(); !errors.Is(err, ErrBadSignature) {
			t.Fatalf("tampered byte %d: %v", at, err)
		}
	}
	// A request signed by another key than the one it names.
	other, _ := GenerateKey(TC26256A, rand.Reader)
	otherDER, _ := CreateCertificateRequest(other, "Иванов Иван", "")
	swapped := append([]byte(nil), der[:len(der)-64]...)
	swapped = append(swapped, otherDER[len(otherDER)-64:]...)
	if r, err := ParseCertificateRequest(swapped); err != nil || r.CheckSignature() == nil {
		t.Fatalf("a signature by another key verified (%v)", err)
	}
	for _, junk := range []string{"", "not base64 !", "MIIB", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"} {
		if _, err := ParseCertificateRequest([]byte(junk)); err == nil {
			t.Fatalf("%q parsed as a request", junk)
		}
	}
}

func TestIssueCertificateFromRequest(t *testing.T) {
	caKey, _ := GenerateKey(TC26256A, rand.Reader)
	now := time.Now()
	ca, err := SelfSignedCertificate(caKey, "Test CA", now.Add(-time.Hour), now.AddDate(1, 0, 0))
	if err != nil {
		t.Fatal(err)
	}
	key, _ := GenerateKey(TC26256A, rand.Reader)
	der, _ := CreateCertificateRequest(key, "Петров Пётр", "")
	req, err := ParseCertificateRequest(der)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := IssueCertificate(req, ca, caKey, now.Add(-time.Minute), now.AddDate(1, 0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if err := cert.CheckSignatureFrom(ca); err != nil {
		t.Fatalf("issued certificate does not verify with the CA: %v", err)
	}
	if cert.Issuer != "CN=Test CA" || cert.Subject != "CN=Петров Пётр" || !cert.PublicKey.Equal(key.Public()) || cert.X509.IsCA {
		t.Fatalf("issued %s by %s, CA %v", cert.Subject, cert.Issuer, cert.X509.IsCA)
	}
	// A digest signature with the request's key verifies with the issued
	// certificate: what a payment signed after activation relies on.
	sig, err := SignDetached([]byte("amount=1.00"), cert, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifyDetached(sig, []byte("amount=1.00"), cert); err != nil {
		t.Fatal(err)
	}
	if _, err := IssueCertificate(req, ca, key, now, now.AddDate(1, 0, 0)); err == nil {
		t.Fatal("issued with a key that is not the CA's")
	}
}

// TestCertificateRequestOpenSSLOracle: OpenSSL verifies our request's
// signature, and our issued certificate against our CA.
func TestCertificateRequestOpenSSLOracle(t *testing.T) {
	requireGOSTEngine(t)
	dir := t.TempDir()
	caKey, _ := GenerateKey(TC26256A, rand.Reader)
	now := time.Now()
	ca, _ := SelfSignedCertificate(caKey, "Oracle CA", now.Add(-time.Hour), now.AddDate(1, 0, 0))
	key, _ := GenerateKey(TC26256A, rand.Reader)
	der, err := CreateCertificateRequest(key, "oracle user", "A00TEST.USER")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "req.der", der)
	if out, err := openssl(t, dir, "req", "-engine", "gost", "-inform", "DER", "-in", "req.der", "-verify", "-noout"); err != nil {
		t.Fatalf("OpenSSL refuses our request: %v %s", err, out)
	}
	req, _ := ParseCertificateRequest(der)
	cert, err := IssueCertificate(req, ca, caKey, now.Add(-time.Minute), now.AddDate(1, 0, 0))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "ca.pem", ca.PEM())
	writeFile(t, dir, "cert.pem", cert.PEM())
	if out, err := openssl(t, dir, "verify", "-engine", "gost", "-CAfile", filepath.Join(dir, "ca.pem"), filepath.Join(dir, "cert.pem")); err != nil {
		t.Fatalf("OpenSSL refuses the issued certificate: %v %s", err, out)
	}
}

// TestCertificateRequestEndingInWhitespaceBytes: a request's DER ends with
// its signature, whose last byte is a tab, a newline or a space in about
// one request in forty; such a request parses whole, as DER, in itself
// and wrapped in CMS, as any other (it once lost its last bytes to the
// trimming meant for PEM and base64).
func TestCertificateRequestEndingInWhitespaceBytes(t *testing.T) {
	caKey, _ := GenerateKey(TC26256A, rand.Reader)
	now := time.Now()
	ca, err := SelfSignedCertificate(caKey, "Test CA", now.Add(-time.Hour), now.AddDate(1, 0, 0))
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for i := 0; i < 5000 && found < 3; i++ {
		key, _ := GenerateKey(TC26256A, rand.Reader)
		der, err := CreateCertificateRequest(key, "Петров Пётр", "")
		if err != nil {
			t.Fatal(err)
		}
		if len(bytes.TrimSpace(der)) == len(der) {
			continue
		}
		found++
		req, err := ParseCertificateRequest(der)
		if err != nil {
			t.Fatalf("a request ending in % x: %v", der[len(der)-2:], err)
		}
		if err := req.CheckSignature(); err != nil {
			t.Fatal(err)
		}
		if _, err := IssueCertificate(req, ca, caKey, now.Add(-time.Minute), now.AddDate(1, 0, 0)); err != nil {
			t.Fatal(err)
		}
	}
	if found == 0 {
		t.Fatal("no request of 5000 ended in a whitespace byte")
	}
}

// TestCertificateRequestCMSContentType: the CMS around a certificate
// request encapsulates it as id-data, as openssl cms -sign -nodetach writes
// it (openssl-256-cpA.csr.p7s) and the SDK's sample (a bare request) implies.
// A SignedData of another content type was made for another purpose (a
// timestamp token, a receipt) and is not a request's envelope, whether its
// signer is verified (certificate embedded) or not (no certificate).
func TestCertificateRequestCMSContentType(t *testing.T) {
	csr := readTestdata(t, "openssl-256-cpA.csr.der")
	key, cert := testKeyAndCert(t, TC26256A)
	for _, tc := range []struct {
		name string
		oid  asn1.ObjectIdentifier
		ok   bool
	}{
		{"id-data", oidData, true},
		{"id-ct-TSTInfo", asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 16, 1, 4}, false},
		{"id-ct-receipt", asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 16, 1, 1}, false},
		{"signedData", oidSignedData, false},
	} {
		for _, noCert := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/nocert=%v", tc.name, noCert), func(t *testing.T) {
				p7, err := SignDetachedWithOptions(csr, cert, key, SignOptions{Attached: true, ContentType: tc.oid, NoCertificate: noCert})
				if err != nil {
					t.Fatal(err)
				}
				_, err = ParseCertificateRequest(p7)
				if tc.ok && err != nil {
					t.Fatal(err)
				}
				if !tc.ok && !errors.Is(err, ErrNotCSR) {
					t.Fatalf("%v, want ErrNotCSR", err)
				}
			})
		}
	}
}
