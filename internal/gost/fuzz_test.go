package gost

import (
	"bytes"
	"encoding/base64"
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
//
// The SignedData is a corpus seed as it is or changed in one DER field, as
// FuzzDERFields changes it, and the content at most 256 bytes. Fuzzed DER
// of one to three kilobytes stalled the run at ~50 executions: the first
// input with new coverage went to the fuzzer's minimizer, whose last pass
// tries each of an input's ~n²/2 substrings, most of them a GOST
// verification, until -fuzzminimizetime (60 s) ran out, while the only
// worker fuzzed nothing. Inputs of a few bytes minimize at once.
func FuzzVerifyDetachedContent(f *testing.F) {
	c := newFuzzCorpus(f)
	for i, s := range c.cms {
		f.Add(uint8(i), uint16(0), uint8(3), []byte{}, s.content)
		f.Add(uint8(i), uint16(0), uint8(3), []byte{}, append(bytes.Clone(s.content), 'x'))
		f.Add(uint8(i), uint16(7*i+1), uint8(0), []byte{1}, s.content)
	}
	f.Fuzz(func(t *testing.T, which uint8, field uint16, op uint8, repl, content []byte) {
		if len(repl) > 256 || len(content) > 256 {
			return
		}
		s := c.cms[int(which)%len(c.cms)]
		data := s.der
		if op%4 != 3 {
			data = editDERField(t, s.der, field, op, repl)
		}
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
	// Certificate files holding a chain: each certificate followed by
	// another, leaf-first or not.
	for _, a := range c.certs {
		for _, b := range c.certs {
			f.Add(append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: a}), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: b})...))
		}
	}
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
//
// The request is a corpus seed as it is or changed in one DER field, as
// FuzzDERFields changes it, and is given as DER, PEM or base64 wrapped as
// JSON carries it; or, for the text forms' own reader, at most 64 fuzzed
// bytes. Fuzzed DER of the seeds' one to three kilobytes stalled the run at
// ~31,000 executions: the minimizer took the only worker over an input
// whose coverage depends on its length, its ~n²/2 substrings each a parse
// and, in a SignedData, a GOST verification, until -fuzzminimizetime ran
// out. The replacement is held to 64 bytes for the same reason: at 256 an
// edited SignedData, whose every execution verifies its signer, still
// stalled the worker for the rest of a 30 s run. 64 bytes hold any OID,
// name or 256-bit INTEGER the parser reads.
func FuzzParseCertificateRequest(f *testing.F) {
	c := newFuzzCorpus(f)
	for i := range c.csrs {
		for form := range uint8(3) {
			f.Add(uint8(i), uint16(0), uint8(3), []byte{}, form)
		}
		f.Add(uint8(i), uint16(5*i+2), uint8(0), []byte{0x7f, 0xff}, uint8(0))
	}
	f.Add(uint8(0), uint16(0), uint8(3), []byte("-----BEGIN CMS-----\nMAA=\n-----END CMS-----\n"), uint8(3))
	f.Add(uint8(0), uint16(0), uint8(3), []byte{0x30, 0x80, 0x30, 0x00, 0x00, 0x00}, uint8(3))
	f.Fuzz(func(t *testing.T, which uint8, field uint16, op uint8, repl []byte, form uint8) {
		if len(repl) > 64 {
			return
		}
		der := c.csrs[int(which)%len(c.csrs)]
		if op%4 != 3 {
			der = editDERField(t, der, field, op, repl)
		}
		var data []byte
		switch form % 4 {
		case 0:
			data = der
		case 1:
			data = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
		case 2:
			data = wrapBase64(der, 76)
		case 3:
			data = repl
		}
		if req, err := ParseCertificateRequest(data); err == nil {
			c.checkRequest(t, req)
		}
	})
}

// wrapBase64 is der in standard base64, broken into lines of n
// characters with CRLF, as a JSON client that wraps MIME-style sends it.
func wrapBase64(der []byte, n int) []byte {
	enc := base64.StdEncoding.EncodeToString(der)
	var b bytes.Buffer
	for len(enc) > n {
		b.WriteString(enc[:n])
		b.WriteString("\r\n")
		enc = enc[n:]
	}
	b.WriteString(enc)
	return b.Bytes()
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
		data := editDERField(t, s.der, field, op, repl)
		if cert, err := ParseCertificate(data); err == nil {
			c.checkCertificate(t, cert)
		}
		if req, err := ParseCertificateRequest(data); err == nil {
			c.checkRequest(t, req)
		}
		c.checkSignedData(t, data, s.content)
	})
}
