package gost

import (
	"bytes"
	"crypto/rand"
	"errors"
	"strings"
	"testing"
	"time"
)

// chainFixture is a signing certificate issued by a CA, as a CA delivers
// it: the leaf's PEM, the CA's PEM.
type chainFixture struct {
	leaf, ca *Certificate
}

func newChainFixture(t *testing.T) chainFixture {
	t.Helper()
	nb := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	caKey, err := GenerateKey(TC26256A, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := SelfSignedCertificate(caKey, "Test CA", nb, nb.AddDate(2, 0, 0))
	if err != nil {
		t.Fatal(err)
	}
	key, err := GenerateKey(TC26256A, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	csrDER, err := CreateCertificateRequest(key, "Иванов И.И.", "")
	if err != nil {
		t.Fatal(err)
	}
	csr, err := ParseCertificateRequest(csrDER)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := IssueCertificate(csr, ca, caKey, nb, nb.AddDate(1, 0, 0))
	if err != nil {
		t.Fatal(err)
	}
	return chainFixture{leaf: leaf, ca: ca}
}

// TestParseCertificateChain: a PEM certificate file that holds the
// certificate's chain after it, as CAs deliver signing certificates, gives
// the first certificate; a file that is not a chain of certificates in
// the signer-first order is refused, naming why.
func TestParseCertificateChain(t *testing.T) {
	f := newChainFixture(t)
	leaf, ca := string(f.leaf.PEM()), string(f.ca.PEM())
	key := "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"
	// What `openssl pkcs12 -nokeys` writes above each certificate.
	bag := func(c *Certificate) string {
		return "Bag Attributes\n    localKeyID: 01 00 00 00\nsubject=" + c.Subject + "\nissuer=" + c.Issuer + "\n"
	}
	tests := []struct {
		name string
		in   string
		want string // error text; "" for the leaf
	}{
		{"leaf alone", leaf, ""},
		{"leaf and its CA", leaf + ca, ""},
		{"CRLF and blank lines between", strings.ReplaceAll(leaf+"\n\n"+ca+"\n", "\n", "\r\n"), ""},
		{"pkcs12 -nokeys bag attributes", bag(f.leaf) + leaf + bag(f.ca) + ca, ""},
		{"sixteen blocks", leaf + strings.Repeat(ca, MaxCertificates-1), ""},
		{"seventeen blocks", leaf + strings.Repeat(ca, MaxCertificates), "at most 16 PEM blocks"},
		{"CA first", ca + leaf, "is a CA's"},
		{"key after the certificate", leaf + key, `PEM block 2 is "PRIVATE KEY"`},
		{"key before the certificate", key + leaf, `PEM block 1 is "PRIVATE KEY"`},
		{"chain block not X.509", leaf + "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", "certificate 2 of the chain"},
		{"text after the last block", leaf + ca + "trailing words\n", "not a sequence"},
		{"broken second block", leaf + "-----BEGIN CERTIFICATE-----\nAAAA\n", "not a sequence"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseCertificate([]byte(tt.in))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if !bytes.Equal(got.Raw, f.leaf.Raw) {
					t.Fatalf("got %q, want the leaf %q", got.Subject, f.leaf.Subject)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want ErrMalformed naming %q", err, tt.want)
			}
		})
	}
}
