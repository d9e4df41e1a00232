package gost

import (
	"encoding/pem"
	"testing"
)

// fuzzCert is the certificate of the golden CMS files FuzzVerifyDetached
// also verifies against.
var fuzzCert *Certificate

// The fuzz targets check that parsers never panic and that whatever they
// accept is internally consistent. Seeds are the golden files.

func FuzzVerifyDetached(f *testing.F) {
	var err error
	if fuzzCert, err = ParseCertificate(readTestdata(f, "openssl-256-cpA.cert.pem")); err != nil {
		f.Fatal(err)
	}
	f.Add(readTestdata(f, "openssl-256-cpA.p7s"))
	f.Add(readTestdata(f, "openssl-512-A-noattr.p7s"))
	// Without the signer's certificate (openssl cms -nocerts, as
	// CryptoPro-based clients send): sid by issuerAndSerialNumber and by
	// subjectKeyIdentifier.
	f.Add(readTestdata(f, "openssl-256-cpA-nocerts.p7s"))
	f.Add(readTestdata(f, "openssl-256-cpA-nocerts-keyid.p7s"))
	f.Add([]byte{0x30, 0x80, 0x06, 0x00, 0x00, 0x00})
	content := readTestdata(f, "digest.txt")
	f.Fuzz(func(t *testing.T, data []byte) {
		signers, err := VerifyDetachedSigners(data, content, nil)
		if err == nil && len(signers) == 0 {
			t.Fatal("verified without signers")
		}
		// With the certificate given, as the bank verifies against the
		// registered one, which also reaches SignedData without
		// certificates.
		signers, err = VerifyDetachedSigners(data, content, fuzzCert)
		if err == nil && (len(signers) == 0 || signers[0].Certificate != fuzzCert) {
			t.Fatal("verified with the given certificate, but not by it")
		}
	})
}

func FuzzParseCertificate(f *testing.F) {
	c := newFuzzCorpus(f)
	for _, der := range c.certs {
		f.Add(der)
	}
	block, _ := pem.Decode(readTestdata(f, "ecdsa-p256.cert.pem"))
	f.Add(block.Bytes)
	f.Fuzz(func(t *testing.T, data []byte) {
		if cert, err := ParseCertificate(data); err == nil {
			c.checkCertificate(t, cert)
		}
	})
}

func FuzzParsePrivateKey(f *testing.F) {
	for _, name := range []string{"openssl-256-cpA.key.pem", "openssl-512-A.key.pem"} {
		block, _ := pem.Decode(readTestdata(f, name))
		f.Add(block.Bytes)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		key, err := ParsePrivateKey(data)
		if err != nil {
			return
		}
		if _, err := MarshalPrivateKey(key); err != nil {
			t.Fatal(err)
		}
	})
}

func FuzzParseJWS(f *testing.F) {
	f.Add("eyJhbGciOiJnb3N0MzQuMTAtMjAxMiIsImtpZCI6ImY0N2FjMTBiLTU4Y2MtNDM3Mi1hNTY3LTBlMDJiMmMzZDQ3OSJ9.e30.AAAA")
	f.Add("a.b.c")
	f.Add("..")
	f.Fuzz(func(t *testing.T, s string) {
		j, err := ParseJWS(s)
		if err != nil {
			return
		}
		if j.Header.Alg != JWSAlgorithm || !IsCanonicalUUID(j.Header.Kid) || len(j.Signature) == 0 {
			t.Fatalf("accepted %+v", j.Header)
		}
	})
}

// FuzzParseCertificateRequest: the PKCS#10 / CMS parser of the API's
// pkcs10.cms never panics, and a request it accepts carries a key on its
// curve, parses again the same, and has a signature that verifies only over
// bytes a key signed.
func FuzzParseCertificateRequest(f *testing.F) {
	c := newFuzzCorpus(f)
	for _, der := range c.csrs {
		f.Add(der)
	}
	f.Add([]byte("-----BEGIN CERTIFICATE REQUEST-----\nMAA=\n-----END CERTIFICATE REQUEST-----\n"))
	f.Add([]byte{0x30, 0x80, 0x30, 0x00, 0x00, 0x00})
	f.Fuzz(func(t *testing.T, data []byte) {
		if req, err := ParseCertificateRequest(data); err == nil {
			c.checkRequest(t, req)
		}
	})
}
