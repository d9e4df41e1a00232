package gost

import (
	"bytes"
	"encoding/base64"
	"encoding/pem"
	"testing"
)

// FuzzInputForms holds the three readers of outside input that take DER,
// PEM or Base64 (ParseCertificate, ParseCertificateRequest and the CMS of
// VerifyDetachedSigners) to reading the same object from each form: a
// certificate, request or SignedData of the corpus, written as DER, as
// PEM, or as Base64 wrapped every width characters with LF or CRLF
// between lines and around the whole, gives what its DER gives.
func FuzzInputForms(f *testing.F) {
	c := newFuzzCorpus(f)
	for i := range 6 {
		f.Add(uint8(i), uint8(i%3), uint8(64), false, uint8(1))
		f.Add(uint8(i+10), uint8(2), uint8(76), true, uint8(0))
	}
	f.Fuzz(func(t *testing.T, which, form, width uint8, crlf bool, pad uint8) {
		kind := int(which) % 3
		var der []byte
		switch kind {
		case 0:
			der = c.certs[int(which/3)%len(c.certs)]
		case 1:
			der = c.csrs[int(which/3)%len(c.csrs)]
		case 2:
			der = c.cms[int(which/3)%len(c.cms)].der
		}
		nl := "\n"
		if crlf {
			nl = "\r\n"
		}
		var in []byte
		switch form % 3 {
		case 0:
			in = der
		case 1:
			typ := [3]string{"CERTIFICATE", "CERTIFICATE REQUEST", "CMS"}[kind]
			in = pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
			if crlf {
				in = bytes.ReplaceAll(in, []byte("\n"), []byte("\r\n"))
			}
		case 2:
			s := base64.StdEncoding.EncodeToString(der)
			if w := int(width); w > 0 {
				var b bytes.Buffer
				for len(s) > w {
					b.WriteString(s[:w] + nl)
					s = s[w:]
				}
				b.WriteString(s)
				s = b.String()
			}
			in = []byte(s)
		}
		if form%3 != 0 {
			for range pad % 3 {
				in = append(append([]byte(nl), in...), nl...)
			}
		}
		switch kind {
		case 0:
			want, err := ParseCertificate(der)
			got, gerr := ParseCertificate(in)
			if err != nil || gerr != nil || !bytes.Equal(got.Raw, want.Raw) {
				t.Fatalf("certificate in form %d (%q): %v; from DER: %v", form%3, in, gerr, err)
			}
		case 1:
			want, err := ParseCertificateRequest(der)
			got, gerr := ParseCertificateRequest(in)
			if err != nil || gerr != nil || !bytes.Equal(got.Raw, want.Raw) {
				t.Fatalf("request in form %d (%q): %v; from DER: %v", form%3, in, gerr, err)
			}
		case 2:
			content := c.cms[int(which/3)%len(c.cms)].content
			_, err := VerifyDetachedSigners(der, content, nil)
			_, gerr := VerifyDetachedSigners(in, content, nil)
			if (err == nil) != (gerr == nil) {
				t.Fatalf("SignedData in form %d (%q): %v; from DER: %v", form%3, in, gerr, err)
			}
		}
	})
}
