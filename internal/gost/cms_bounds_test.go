package gost

import (
	"errors"
	"testing"
	"time"
)

// repeatSigned rebuilds the SignedData der (made by SignDetached, one
// SignerInfo, the signer's certificate embedded) with its SignerInfo
// written signers times and its certificate certs times: copies of a
// valid signature, each of which a verifier without a bound checks again.
func repeatSigned(t testing.TB, der []byte, signers, certs int) []byte {
	t.Helper()
	ci, _, err := parseTLV(der, 0)
	if err != nil {
		t.Fatal(err)
	}
	r := ci.children()
	ct, err := r.read(tagOID)
	if err != nil {
		t.Fatal(err)
	}
	wrapper, err := r.read(tagContext0)
	if err != nil {
		t.Fatal(err)
	}
	sdEl, err := wrapper.children().read(tagSequence)
	if err != nil {
		t.Fatal(err)
	}
	sr := sdEl.children()
	var fields [][]byte // version, digestAlgorithms, encapContentInfo
	for range 3 {
		el, err := sr.next()
		if err != nil {
			t.Fatal(err)
		}
		fields = append(fields, el.full)
	}
	certSet, err := sr.read(tagContext0)
	if err != nil {
		t.Fatal(err)
	}
	sis, err := sr.read(tagSet)
	if err != nil {
		t.Fatal(err)
	}
	var certList, siList [][]byte
	for range certs {
		certList = append(certList, certSet.content)
	}
	for range signers {
		siList = append(siList, sis.content)
	}
	sd := derWrap(tagSequence, append(fields, derWrap(tagContext0, certList...), derWrap(tagSet, siList...))...)
	return derWrap(tagSequence, ct.full, derWrap(tagContext0, sd))
}

// TestSignedDataBounds holds the CMS verifier to MaxSigners and
// MaxCertificates: a SignedData within them verifies as before, one beyond
// is refused with ErrTooManySigners or ErrTooManyCertificates (both
// ErrMalformed) before any signature is checked, so thousands of copies
// of a valid SignerInfo cost a parse that stops at the bound, not
// thousands of GOST verifications. The copies are the project's own
// signatures, each valid on its own.
func TestSignedDataBounds(t *testing.T) {
	key, cert := testKeyAndCert(t, TC26256A)
	content := []byte("amount=100.00\ndate=2026-11-30")
	der, err := SignDetachedWithOptions(content, cert, key, SignOptions{SigningTime: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name           string
		signers, certs int
		want           error // nil: verifies
	}{
		{"one signer", 1, 1, nil},
		{"two signers", MaxSigners, 1, nil},
		{"three signers", MaxSigners + 1, 1, ErrTooManySigners},
		{"five thousand signers", 5000, 1, ErrTooManySigners},
		{"certificates at the bound", 1, MaxCertificates, nil},
		{"certificates beyond the bound", 1, MaxCertificates + 1, ErrTooManyCertificates},
		{"five thousand certificates", 1, 5000, ErrTooManyCertificates},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := repeatSigned(t, der, c.signers, c.certs)
			for _, given := range []*Certificate{cert, nil} {
				start := time.Now()
				signers, err := VerifyDetachedSigners(in, content, given)
				took := time.Since(start)
				if c.want == nil {
					if err != nil || len(signers) != c.signers {
						t.Fatalf("given %v: %d signers, %v; want %d verified", given != nil, len(signers), err, c.signers)
					}
					continue
				}
				if !errors.Is(err, c.want) || !errors.Is(err, ErrMalformed) {
					t.Fatalf("given %v: %v after %v, want %v", given != nil, err, took, c.want)
				}
				t.Logf("given %v: refused in %v", given != nil, took)
			}
		})
	}
}

// TestCertificateRequestCMSBounds: the CMS around a certificate request,
// whose signers are verified with its embedded certificates, keeps the
// same bounds, on OpenSSL's SignedData of a request.
func TestCertificateRequestCMSBounds(t *testing.T) {
	p7s := readTestdata(t, "openssl-256-cpA.csr.p7s")
	for _, c := range []struct {
		name           string
		signers, certs int
		want           error
	}{
		{"as OpenSSL wrote it", 1, 1, nil},
		{"two signers", MaxSigners, 1, nil},
		{"three signers", MaxSigners + 1, 1, ErrTooManySigners},
		{"three thousand signers", 3000, 1, ErrTooManySigners},
		{"certificates beyond the bound", 1, MaxCertificates + 1, ErrTooManyCertificates},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseCertificateRequest(repeatSigned(t, p7s, c.signers, c.certs))
			if (c.want == nil && err != nil) || (c.want != nil && !errors.Is(err, c.want)) {
				t.Fatalf("%v, want %v", err, c.want)
			}
		})
	}
}
