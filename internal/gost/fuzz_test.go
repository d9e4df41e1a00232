package gost

import (
	"bytes"
	"encoding/pem"
	"testing"
)

// The fuzz targets check that parsers never panic and that whatever they
// accept is internally consistent and signed by whom it says. Seeds are the
// golden files and the certificates, requests and SignedData of
// newFuzzCorpus.

func FuzzVerifyDetached(f *testing.F) {
	c := newFuzzCorpus(f)
	digest := readTestdata(f, "digest.txt")
	for _, s := range c.cms {
		if bytes.Equal(s.content, digest) {
			f.Add(s.der)
		}
	}
	f.Add([]byte{0x30, 0x80, 0x06, 0x00, 0x00, 0x00})
	f.Fuzz(func(t *testing.T, data []byte) {
		c.checkSignedData(t, data, digest)
	})
}

// FuzzVerifyDetachedContent mutates the content as well as the SignedData:
// a signature must not verify over content its key did not sign.
func FuzzVerifyDetachedContent(f *testing.F) {
	c := newFuzzCorpus(f)
	for _, s := range c.cms {
		f.Add(s.der, s.content)
	}
	f.Fuzz(func(t *testing.T, data, content []byte) {
		c.checkSignedData(t, data, content)
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

// FuzzDERFields changes one element of a valid certificate, request or
// SignedData and encodes it again with every enclosing length right: op
// picks whether the element's content is replaced by repl (an INTEGER, a
// string, an OID, or the whole content of a constructed element), the
// element is dropped, or it is repeated. The input stays one field away
// from a valid one, where random bytes seldom reach.
func FuzzDERFields(f *testing.F) {
	c := newFuzzCorpus(f)
	type seed struct{ der, content []byte }
	var seeds []seed
	for _, der := range c.certs {
		seeds = append(seeds, seed{der: der})
	}
	for _, der := range c.csrs {
		seeds = append(seeds, seed{der: der})
	}
	for _, s := range c.cms {
		seeds = append(seeds, seed(s))
	}
	for i := range seeds {
		f.Add(uint8(i), uint16(3*i+1), uint8(i%3), []byte{0})
		f.Add(uint8(i), uint16(5*i+2), uint8(0), []byte{0x7f, 0xff})
	}
	f.Fuzz(func(t *testing.T, which uint8, field uint16, op uint8, repl []byte) {
		s := seeds[int(which)%len(seeds)]
		top, ok := parseDERTree(s.der, 0)
		if !ok || len(top) != 1 {
			t.Fatal("seed is not one DER element")
		}
		type site struct {
			parent *derTree
			i      int
		}
		var sites []site
		top[0].walk(func(parent *derTree, i int) { sites = append(sites, site{parent, i}) })
		at := sites[int(field)%len(sites)]
		el := at.parent.kids[at.i]
		switch op % 3 {
		case 0:
			el.kids = nil
			el.content = repl
		case 1:
			at.parent.kids = append(at.parent.kids[:at.i:at.i], at.parent.kids[at.i+1:]...)
		case 2:
			at.parent.kids = append(at.parent.kids[:at.i+1:at.i+1], at.parent.kids[at.i:]...)
		}
		data := top[0].encode()
		if cert, err := ParseCertificate(data); err == nil {
			c.checkCertificate(t, cert)
		}
		if req, err := ParseCertificateRequest(data); err == nil {
			c.checkRequest(t, req)
		}
		c.checkSignedData(t, data, s.content)
	})
}
