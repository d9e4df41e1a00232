package gost

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestCMSInputForms holds decodeCMSInput's rule: PEM only when the input,
// after optional white space, opens with the PEM boundary and is one
// block with nothing but white space after it; DER when it opens with a
// SEQUENCE, whatever it holds; base64 otherwise. The signer's certificate
// has a common name that is itself a PEM block, so the DER SignedData
// embedding it holds one: pem.Decode, which looks for a boundary
// anywhere, read that block instead of the DER.
func TestCMSInputForms(t *testing.T) {
	key, err := GenerateKey(TC26256A, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	// pem.Decode takes a boundary at the start of a line: the name
	// opens with a line break.
	embedded := "\n" + string(pem.EncodeToMemory(&pem.Block{Type: "CMS", Bytes: []byte{0x30, 0}}))
	cert, err := SelfSignedCertificate(key, embedded, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	content := []byte("amount=1.00")
	der, err := SignDetached(content, cert, key)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(der), embedded) {
		t.Fatal("the DER does not hold the PEM block it is meant to")
	}
	pemText := string(pem.EncodeToMemory(&pem.Block{Type: "CMS", Bytes: der}))
	b64 := base64.StdEncoding.EncodeToString(der)
	for _, c := range []struct {
		name string
		in   string
		ok   bool
	}{
		{"DER holding a PEM block", string(der), true},
		{"PEM", pemText, true},
		{"PEM after white space", " \r\n\t" + pemText, true},
		{"PEM with white space after it", pemText + "\r\n \n", true},
		{"PKCS7 PEM", strings.ReplaceAll(pemText, "CMS", "PKCS7"), true},
		{"base64", b64, true},
		{"base64 with white space", "\n" + b64 + "\n", true},
		{"PEM after explanatory text", "signature:\n" + pemText, true},
		{"PEM after a byte-order mark", "\ufeff" + pemText, true},
		{"PEM after binary bytes", "\x01\x02\n" + pemText, false},
		{"PEM after text holding a boundary", "see -----BEGIN X\n" + pemText, false},
		{"PEM after text, not opening a line", "signature: " + pemText, false},
		{"PEM after an unfinished boundary", "-----BEGIN \n" + pemText, false},
		{"PEM with junk after it", pemText + "trailer", false},
		{"PEM followed by another block", pemText + pemText, false},
		{"PEM missing its end", strings.SplitAfter(pemText, "\n")[0] + b64, false},
		{"DER after white space", "\n" + string(der), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := VerifyDetached([]byte(c.in), content, cert)
			if c.ok && err != nil {
				t.Fatalf("%v", err)
			}
			if !c.ok && !errors.Is(err, ErrMalformed) {
				t.Fatalf("%v, want ErrMalformed", err)
			}
		})
	}
}

// TestPEMInputRuleOfEachParser holds the certificate, private key and
// certificate request parsers to pemInput's rule too: a PEM block followed
// by junk is not taken, one after white space, a byte-order mark or
// explanatory text is, and
// a DER certificate holding a PEM block is read as itself.
func TestPEMInputRuleOfEachParser(t *testing.T) {
	key, err := GenerateKey(TC26256A, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := SelfSignedCertificate(key, "plain", time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err := MarshalPrivateKeyPEM(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := string(cert.PEM())
	csrPEM := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: readTestdata(t, "openssl-256-cpA.csr.der")}))
	parsers := map[string]func([]byte) error{
		"certificate": func(b []byte) error { _, err := ParseCertificate(b); return err },
		"private key": func(b []byte) error { _, err := ParsePrivateKey(b); return err },
		"request":     func(b []byte) error { _, err := ParseCertificateRequest(b); return err },
	}
	for _, c := range []struct {
		parser, name, in string
		ok               bool
	}{
		{"certificate", "PEM after white space", "\n " + certPEM, true},
		{"certificate", "PEM after explanatory text", "Certificate:\n    Data:\n        Version: 3 (0x2)\n" + certPEM, true},
		{"certificate", "PEM after a byte-order mark", "\ufeff" + certPEM, true},
		{"certificate", "PEM after binary bytes", "\x00\n" + certPEM, false},
		{"certificate", "PEM with junk after it", certPEM + "junk", false},
		{"private key", "PEM after white space", "\r\n" + string(keyPEM), true},
		{"private key", "PEM after explanatory text", "Bag Attributes\n    localKeyID: 01\n" + string(keyPEM), true},
		{"private key", "PEM after an unfinished boundary", "-----BEGIN \n" + string(keyPEM), false},
		{"request", "PEM after white space", "\n\t" + csrPEM, true},
		{"request", "PEM after explanatory text", "Certificate Request:\n    Data:\n" + csrPEM, true},
		{"request", "PEM after a byte-order mark", "\ufeff" + csrPEM, true},
		{"request", "PEM after another block", certPEM + csrPEM, false},
		{"request", "PEM followed by another block", csrPEM + certPEM, false},
	} {
		t.Run(c.parser+"/"+c.name, func(t *testing.T) {
			err := parsers[c.parser]([]byte(c.in))
			if (err == nil) != c.ok {
				t.Fatalf("err %v, want ok %v", err, c.ok)
			}
		})
	}
	// A DER certificate whose name holds a PEM block is read as itself.
	embedded := "\n" + certPEM
	odd, err := SelfSignedCertificate(key, embedded, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	again, err := ParseCertificate(odd.Raw)
	if err != nil {
		t.Fatalf("DER holding a PEM block: %v", err)
	}
	if again.X509.Subject.CommonName != embedded {
		t.Fatalf("DER holding a PEM block read as the certificate %q", again.X509.Subject.CommonName)
	}
}
