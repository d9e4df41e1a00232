package gost

import (
	"bytes"
	"crypto/rand"
	"encoding/asn1"
	"encoding/base64"
	"errors"
	"testing"
	"time"
)

func testKeyAndCert(t testing.TB, params *Params) (*PrivateKey, *Certificate) {
	t.Helper()
	key, err := GenerateKey(params, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := SelfSignedCertificate(key, "signer", time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	return key, cert
}

// TestVerifyOpenSSLGolden verifies signatures made by `openssl cms -sign`
// with the GOST engine (testdata, see gen commands in openssl_test.go).
func TestVerifyOpenSSLGolden(t *testing.T) {
	content := readTestdata(t, "digest.txt")
	tests := []struct {
		p7s, cert string
		attrs     bool
	}{
		{"openssl-256-cpA.p7s", "openssl-256-cpA.cert.pem", true},
		{"openssl-512-A-noattr.p7s", "openssl-512-A.cert.pem", false},
	}
	for _, tc := range tests {
		t.Run(tc.p7s, func(t *testing.T) {
			p7s := readTestdata(t, tc.p7s)
			cert, err := ParseCertificate(readTestdata(t, tc.cert))
			if err != nil {
				t.Fatal(err)
			}
			signers, err := VerifyDetachedSigners(p7s, content, nil)
			if err != nil {
				t.Fatalf("embedded certificate: %v", err)
			}
			if len(signers) != 1 || !bytes.Equal(signers[0].Certificate.Raw, cert.Raw) || signers[0].SignedAttrs != tc.attrs {
				t.Fatalf("signers = %+v", signers)
			}
			if tc.attrs && signers[0].SigningTime.IsZero() {
				t.Error("signingTime not reported")
			}
			if err := VerifyDetached(p7s, content, cert); err != nil {
				t.Fatalf("given certificate: %v", err)
			}
			if err := VerifyDetached([]byte(base64.StdEncoding.EncodeToString(p7s)), content, cert); err != nil {
				t.Fatalf("base64 input: %v", err)
			}
			changed := append(bytes.Clone(content), ' ')
			if err := VerifyDetached(p7s, changed, nil); !errors.Is(err, ErrBadSignature) {
				t.Fatalf("changed content: %v", err)
			}
			_, other := testKeyAndCert(t, cert.PublicKey.Params)
			if err := VerifyDetached(p7s, content, other); !errors.Is(err, ErrSignerNotFound) {
				t.Fatalf("other certificate: %v", err)
			}
		})
	}
}

// TestVerifyOpenSSLGoldenNoCertificate verifies signatures made by
// `openssl cms -sign -nocerts` (issuerAndSerialNumber) and `-nocerts
// -keyid` (subjectKeyIdentifier) over digest.txt with the key of
// openssl-256-cpA.cert.pem: the SignedData has no certificates, so they
// verify only with the signer's certificate given.
func TestVerifyOpenSSLGoldenNoCertificate(t *testing.T) {
	content := readTestdata(t, "digest.txt")
	cert, err := ParseCertificate(readTestdata(t, "openssl-256-cpA.cert.pem"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		p7s   string
		keyID bool
	}{
		{"openssl-256-cpA-nocerts.p7s", false},
		{"openssl-256-cpA-nocerts-keyid.p7s", true},
	} {
		t.Run(tc.p7s, func(t *testing.T) {
			p7s := readTestdata(t, tc.p7s)
			if _, err := VerifyDetachedSigners(p7s, content, nil); !errors.Is(err, ErrSignerNotFound) {
				t.Fatalf("without a certificate: %v, want ErrSignerNotFound", err)
			}
			signers, err := VerifyDetachedSigners(p7s, content, cert)
			if err != nil {
				t.Fatalf("given certificate: %v", err)
			}
			if len(signers) != 1 || signers[0].BySubjectKeyID != tc.keyID || !signers[0].SignedAttrs {
				t.Fatalf("signers = %+v", signers)
			}
			if err := VerifyDetached(p7s, append(bytes.Clone(content), ' '), cert); !errors.Is(err, ErrBadSignature) {
				t.Fatalf("changed content: %v", err)
			}
			_, other := testKeyAndCert(t, cert.PublicKey.Params)
			if err := VerifyDetached(p7s, content, other); !errors.Is(err, ErrSignerNotFound) {
				t.Fatalf("other certificate: %v", err)
			}
		})
	}
}

func TestSignDetachedRoundTrip(t *testing.T) {
	content := []byte("amount=1500.00\ndate=2026-02-01\npurpose=Оплата по счёту №5")
	when := time.Date(2026, 2, 1, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		params *Params
		opt    SignOptions
	}{
		{"256-attrs", TC26256A, SignOptions{SigningTime: when}},
		{"256-noattr", CryptoProA, SignOptions{NoSignedAttributes: true}},
		{"256-keyid", TC26256B, SignOptions{BySubjectKeyID: true, SigningTime: when}},
		{"512-attrs", TC26512A, SignOptions{SigningTime: when}},
		{"256-nocert", TC26256A, SignOptions{NoCertificate: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			key, cert := testKeyAndCert(t, tc.params)
			der, err := SignDetachedWithOptions(content, cert, key, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			signers, err := VerifyDetachedSigners(der, content, cert)
			if err != nil {
				t.Fatal(err)
			}
			s := signers[0]
			if s.SignedAttrs == tc.opt.NoSignedAttributes || s.BySubjectKeyID != tc.opt.BySubjectKeyID {
				t.Fatalf("signer = %+v", s)
			}
			if !tc.opt.NoSignedAttributes && !s.SigningTime.Equal(tc.opt.SigningTime) && !tc.opt.SigningTime.IsZero() {
				t.Fatalf("signing time %v", s.SigningTime)
			}
			err = VerifyDetached(der, content, nil)
			if tc.opt.NoCertificate {
				if !errors.Is(err, ErrSignerNotFound) {
					t.Fatalf("no embedded certificate: %v", err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			// Flipping any byte of the signature value breaks verification.
			bad := bytes.Clone(der)
			bad[len(bad)-3] ^= 0x40
			if err := VerifyDetached(bad, content, cert); !errors.Is(err, ErrBadSignature) {
				t.Fatalf("tampered signature: %v", err)
			}
		})
	}
}

// TestVerifyDetachedGarbage feeds every truncation and every single-byte
// corruption: none may panic, truncations never verify, and corrupting any
// byte of the signed attributes, the signer identifier or the signature
// value is always caught. (Bytes such as the SignedData version or an
// embedded certificate's extensions are not covered by the signature; the
// caller pins the signer certificate.)
func TestVerifyDetachedGarbage(t *testing.T) {
	content := readTestdata(t, "digest.txt")
	p7s := readTestdata(t, "openssl-256-cpA.p7s")
	for n := 0; n < len(p7s); n++ {
		if err := VerifyDetached(p7s[:n], content, nil); err == nil {
			t.Fatalf("truncated to %d bytes: verified", n)
		}
	}
	sd, err := parseSignedData(p7s)
	if err != nil {
		t.Fatal(err)
	}
	si := sd.signers[0]
	attrsAt := bytes.Index(p7s, si.signedAttrs.full)
	sigAt := bytes.Index(p7s, si.signature)
	serialAt := bytes.Index(p7s[attrsAt-40:], si.serial) + attrsAt - 40
	mustFail := func(i int) bool {
		return (i >= attrsAt && i < attrsAt+len(si.signedAttrs.full)) ||
			(i >= sigAt && i < sigAt+len(si.signature)) ||
			(i >= serialAt && i < serialAt+len(si.serial))
	}
	// Every third byte keeps the test fast under -race; offsets vary across
	// field boundaries because the fields have lengths not divisible by 3.
	for i := 0; i < len(p7s); i += 3 {
		bad := bytes.Clone(p7s)
		bad[i] ^= 0xff
		err := VerifyDetached(bad, content, nil)
		if mustFail(i) && err == nil {
			t.Fatalf("byte %d corrupted: verified", i)
		}
	}
	if err := VerifyDetached(nil, content, nil); !errors.Is(err, ErrMalformed) {
		t.Fatalf("empty input: %v", err)
	}
}

func TestSignDetachedKeyMismatch(t *testing.T) {
	key, _ := testKeyAndCert(t, TC26256A)
	_, cert := testKeyAndCert(t, TC26256A)
	if _, err := SignDetached([]byte("x"), cert, key); err == nil {
		t.Fatal("signed with a key that is not the certificate's")
	}
}

// TestVerifyDetachedBER re-encodes the outer ContentInfo and its [0] wrapper
// with indefinite lengths, as some signing tools write them.
func TestVerifyDetachedBER(t *testing.T) {
	content := readTestdata(t, "digest.txt")
	der := readTestdata(t, "openssl-256-cpA.p7s")
	ci, _, err := parseTLV(der, 0)
	if err != nil {
		t.Fatal(err)
	}
	r := ci.children()
	oid, _ := r.next()
	wrapper, _ := r.next()
	ber := append([]byte{tagSequence, 0x80}, oid.full...)
	ber = append(ber, tagContext0, 0x80)
	ber = append(ber, wrapper.content...)
	ber = append(ber, 0, 0, 0, 0)
	if err := VerifyDetached(ber, content, nil); err != nil {
		t.Fatalf("BER input: %v", err)
	}
	if err := VerifyDetached(ber[:len(ber)-2], content, nil); !errors.Is(err, ErrMalformed) {
		t.Fatalf("unterminated BER: %v", err)
	}
}

// TestVerifyDetachedSignatureOID: banking.md 9.2 asks to accept the
// signature-with-digest OID 1.2.643.7.1.1.3.2 where OpenSSL writes the key
// OID 1.2.643.7.1.1.1.1, and to reject anything else there.
func TestVerifyDetachedSignatureOID(t *testing.T) {
	content := []byte("amount=1.00")
	key, cert := testKeyAndCert(t, TC26256A)
	der, err := SignDetachedWithOptions(content, cert, key, SignOptions{NoCertificate: true})
	if err != nil {
		t.Fatal(err)
	}
	keyOIDDER := mustMarshal(oidKey256)
	if bytes.Count(der, keyOIDDER) != 1 {
		t.Fatal("expected the key OID exactly once (signatureAlgorithm)")
	}
	tests := []struct {
		oid  []byte
		want error
	}{
		{mustMarshal(oidSignature256), nil},
		{mustMarshal(oidSignature512), ErrNotGOST},
		{mustMarshal(oidDigest256), ErrNotGOST},
	}
	for _, tc := range tests {
		swapped := bytes.Replace(der, keyOIDDER, tc.oid, 1)
		err := VerifyDetached(swapped, content, cert)
		if (tc.want == nil && err != nil) || (tc.want != nil && !errors.Is(err, tc.want)) {
			t.Errorf("signatureAlgorithm %x: err = %v, want %v", tc.oid, err, tc.want)
		}
	}
}

// TestVerifyDetachedContentType: a digest signature is a SignedData over
// id-data (banking.md 9.2). One of another content type, its contentType
// attribute matching, is well formed CMS made for another purpose (a
// receipt, a timestamp token): refused as malformed for this use, with the
// signer certificate given or embedded, before and after any other check.
func TestVerifyDetachedContentType(t *testing.T) {
	content := []byte("amount=1.00\ndate=2026-01-15")
	key, cert := testKeyAndCert(t, TC26256A)
	for _, tc := range []struct {
		name string
		oid  asn1.ObjectIdentifier
		ok   bool
	}{
		{"default, id-data", nil, true},
		{"id-data", oidData, true},
		{"signedData", oidSignedData, false},
		{"envelopedData", asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 3}, false},
		{"id-ct-receipt", asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 16, 1, 1}, false},
		{"id-ct-TSTInfo", asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 16, 1, 4}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			der, err := SignDetachedWithOptions(content, cert, key, SignOptions{ContentType: tc.oid})
			if err != nil {
				t.Fatal(err)
			}
			for _, signer := range []*Certificate{cert, nil} {
				err := VerifyDetached(der, content, signer)
				if tc.ok && err != nil {
					t.Fatalf("signer given %v: %v", signer != nil, err)
				}
				if !tc.ok && !errors.Is(err, ErrMalformed) {
					t.Fatalf("signer given %v: %v, want ErrMalformed", signer != nil, err)
				}
			}
		})
	}
}

// TestVerifyDetachedNilContentIsEmpty: a detached verification covers the
// content given and nothing else. A SignedData that carries its content
// (here an OpenSSL-signed certificate request) verifies with that content
// given, but not with nil content, which is empty, not "whatever the
// signer embedded": a digest text that arrived empty must not verify
// against content the signer chose.
func TestVerifyDetachedNilContentIsEmpty(t *testing.T) {
	p7s := readTestdata(t, "openssl-256-cpA.csr.p7s")
	attached := attachedContent(p7s)
	if len(attached) == 0 {
		t.Fatal("the golden SignedData carries no content")
	}
	if err := VerifyDetached(p7s, attached, nil); err != nil {
		t.Fatalf("over its attached content: %v", err)
	}
	for _, content := range [][]byte{nil, {}} {
		if err := VerifyDetached(p7s, content, nil); !errors.Is(err, ErrBadSignature) {
			t.Fatalf("over %q: %v, want ErrBadSignature", content, err)
		}
	}
}

// TestVerifyDetachedDigestAlgorithm: the SignerInfo's digestAlgorithm must
// be listed in SignedData.digestAlgorithms (RFC 5652 §5.1, §5.3) and be the
// Streebog of the key's size (RFC 7836, banking.md 9.3). Neither field is
// covered by the signature, so the SignedData is rewritten after signing:
// the verifier hashes with the key's Streebog whatever the SignerInfo
// names, and only these checks refuse a SignedData that claims another.
func TestVerifyDetachedDigestAlgorithm(t *testing.T) {
	content := []byte("amount=1.00")
	key, cert := testKeyAndCert(t, TC26256A)
	// Without the certificate, whose key parameters name Streebog-256 too.
	der, err := SignDetachedWithOptions(content, cert, key, SignOptions{NoCertificate: true})
	if err != nil {
		t.Fatal(err)
	}
	d256, d512 := mustMarshal(oidDigest256), mustMarshal(oidDigest512)
	if bytes.Count(der, d256) != 2 {
		t.Fatal("expected the digest OID twice (digestAlgorithms, SignerInfo)")
	}
	at := bytes.Index(der, d256)
	listOnly := bytes.Clone(der) // SignedData.digestAlgorithms names Streebog-512 only
	copy(listOnly[at:], d512)    // the same length: only the last arc differs
	for _, tc := range []struct {
		name string
		der  []byte
		want error
	}{
		{"as signed", der, nil},
		{"not in digestAlgorithms", listOnly, ErrMalformed},
		{"Streebog-512 for a 256-bit key", bytes.ReplaceAll(der, d256, d512), ErrNotGOST},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := VerifyDetached(tc.der, content, cert)
			if (tc.want == nil && err != nil) || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Fatalf("%v, want %v", err, tc.want)
			}
		})
	}
}

// TestVerifyDetachedContentMismatch: a SignedData over other content is
// ErrContentMismatch (still an ErrBadSignature), whether its messageDigest
// or the content it carries differs, so a caller can tell "signed another
// text" from a signature value that does not verify, which is not one.
func TestVerifyDetachedContentMismatch(t *testing.T) {
	content := []byte("amount=1500.00\ndate=2026-02-01")
	key, cert := testKeyAndCert(t, TC26256A)
	for _, opt := range []SignOptions{{}, {Attached: true}} {
		der, err := SignDetachedWithOptions(append(bytes.Clone(content), '\n'), cert, key, opt)
		if err != nil {
			t.Fatal(err)
		}
		if err := VerifyDetached(der, content, cert); !errors.Is(err, ErrContentMismatch) || !errors.Is(err, ErrBadSignature) {
			t.Fatalf("attached=%v: %v, want ErrContentMismatch", opt.Attached, err)
		}
	}
	der, err := SignDetachedWithOptions(content, cert, key, SignOptions{})
	if err != nil {
		t.Fatal(err)
	}
	der[len(der)-1] ^= 1
	if err := VerifyDetached(der, content, cert); !errors.Is(err, ErrBadSignature) || errors.Is(err, ErrContentMismatch) {
		t.Fatalf("tampered signature value: %v, want ErrBadSignature only", err)
	}
}
