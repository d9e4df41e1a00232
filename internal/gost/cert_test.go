package gost

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestOpenSSLFixtures parses keys and certificates the OpenSSL GOST engine
// generated (golden files in testdata) and checks that they belong together.
func TestOpenSSLFixtures(t *testing.T) {
	tests := []struct {
		key, cert string
		params    *Params
		subject   string
	}{
		{"openssl-256-cpA.key.pem", "openssl-256-cpA.cert.pem", CryptoProA, "CN=openssl-256,O=Test Bank"},
		{"openssl-512-A.key.pem", "openssl-512-A.cert.pem", TC26512A, "CN=test512,O=Bank"},
	}
	for _, tc := range tests {
		t.Run(tc.cert, func(t *testing.T) {
			key, err := ParsePrivateKey(readTestdata(t, tc.key))
			if err != nil {
				t.Fatal(err)
			}
			if key.Params != tc.params {
				t.Fatalf("params %s, want %s", key.Params.Name, tc.params.Name)
			}
			cert, err := ParseCertificate(readTestdata(t, tc.cert))
			if err != nil {
				t.Fatal(err)
			}
			if cert.Subject != tc.subject || cert.Issuer != tc.subject {
				t.Errorf("subject %q issuer %q", cert.Subject, cert.Issuer)
			}
			if !cert.PublicKey.Equal(key.Public()) {
				t.Fatal("certificate key does not match private key")
			}
			if err := cert.CheckSignatureFrom(cert); err != nil {
				t.Fatalf("OpenSSL self-signature: %v", err)
			}
			if cert.SerialHex != cert.SerialNumber.Text(16) || len(cert.SerialHex) < 30 {
				t.Errorf("serial %q", cert.SerialHex)
			}
			// DER and base64 forms parse to the same certificate.
			for _, form := range [][]byte{cert.Raw, []byte(base64.StdEncoding.EncodeToString(cert.Raw))} {
				again, err := ParseCertificate(form)
				if err != nil || !bytes.Equal(again.Raw, cert.Raw) {
					t.Fatalf("reparse: %v", err)
				}
			}
			// Our PKCS#8 encoding is byte-identical to the engine's.
			block, _ := pem.Decode(readTestdata(t, tc.key))
			ours, err := MarshalPrivateKey(key)
			if err != nil || !bytes.Equal(ours, block.Bytes) {
				t.Fatalf("MarshalPrivateKey differs from OpenSSL's PKCS#8: %v", err)
			}
			spki := MarshalPublicKey(key.Public())
			if !bytes.Equal(spki, cert.X509.RawSubjectPublicKeyInfo) {
				t.Fatalf("MarshalPublicKey differs from OpenSSL's SPKI")
			}
		})
	}
}

func TestParseCertificateErrors(t *testing.T) {
	if _, err := ParseCertificate(readTestdata(t, "ecdsa-p256.cert.pem")); !errors.Is(err, ErrNotGOST) {
		t.Fatalf("ECDSA certificate: %v, want ErrNotGOST", err)
	}
	good := readTestdata(t, "openssl-256-cpA.cert.pem")
	block, _ := pem.Decode(good)
	for _, n := range []int{0, 1, 10, len(block.Bytes) / 2, len(block.Bytes) - 1} {
		if _, err := ParseCertificate(block.Bytes[:n]); err == nil {
			t.Errorf("truncated to %d bytes: no error", n)
		}
	}
	if _, err := ParseCertificate([]byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")); err == nil {
		t.Error("wrong PEM type accepted")
	}
	if _, err := ParsePrivateKey(good); err == nil {
		t.Error("certificate accepted as private key")
	}
}

func TestSelfSignedCertificate(t *testing.T) {
	for _, params := range []*Params{TC26256A, TC26512C} {
		t.Run(params.Name, func(t *testing.T) {
			key, err := GenerateKey(params, rand.Reader)
			if err != nil {
				t.Fatal(err)
			}
			nb := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			na := nb.AddDate(1, 0, 0)
			cert, err := SelfSignedCertificate(key, "Иванов И.И.", nb, na)
			if err != nil {
				t.Fatal(err)
			}
			if cert.Subject != "CN=Иванов И.И." || !cert.NotBefore.Equal(nb) || !cert.NotAfter.Equal(na) {
				t.Fatalf("subject %q validity %v..%v", cert.Subject, cert.NotBefore, cert.NotAfter)
			}
			if !cert.PublicKey.Equal(key.Public()) || len(cert.SubjectKeyID) != 20 {
				t.Fatal("key or SKI mismatch")
			}
			if err := cert.CheckSignatureFrom(cert); err != nil {
				t.Fatal(err)
			}
			if !cert.ValidAt(nb.Add(time.Hour)) || cert.ValidAt(na.Add(time.Second)) {
				t.Fatal("ValidAt")
			}
			// A different key does not verify the certificate.
			other, _ := GenerateKey(params, rand.Reader)
			otherCert, _ := SelfSignedCertificate(other, "x", nb, na)
			if err := cert.CheckSignatureFrom(otherCert); !errors.Is(err, ErrBadSignature) {
				t.Fatalf("foreign issuer: %v", err)
			}
			der, err := MarshalPrivateKey(key)
			if err != nil {
				t.Fatal(err)
			}
			back, err := ParsePrivateKey(der)
			if err != nil || back.D.Cmp(key.D) != 0 {
				t.Fatalf("private key round trip: %v", err)
			}
		})
	}
}

// TestParsePrivateKeyLegacyForms covers the privateKey encodings of older
// engine versions: an inner OCTET STRING with the little-endian scalar, and
// an inner INTEGER.
func TestParsePrivateKeyLegacyForms(t *testing.T) {
	key, err := GenerateKey(TC26256A, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	le := make([]byte, 32)
	key.D.FillBytes(le)
	reverse(le)
	wrap := func(inner []byte) []byte {
		return derWrap(tagSequence, mustMarshal(0), keyAlgorithmDER(TC26256A), derWrap(tagOctetString, inner))
	}
	tests := []struct {
		name string
		der  []byte
		ok   bool
	}{
		{"raw", wrap(le), true},
		{"octet string", wrap(derWrap(tagOctetString, le)), true},
		{"integer", wrap(mustMarshal(key.D)), true},
		{"short raw", wrap(le[:31]), false},
		{"octet string wrong size", wrap(derWrap(tagOctetString, le[:16])), false},
		{"zero scalar", wrap(make([]byte, 32)), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParsePrivateKey(tc.der)
			if !tc.ok {
				if err == nil {
					t.Fatal("accepted")
				}
				return
			}
			if err != nil || got.D.Cmp(key.D) != 0 || !got.Public().Equal(key.Public()) {
				t.Fatalf("got %v, %v", got, err)
			}
		})
	}
}
