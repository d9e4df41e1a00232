package gost

import (
	"errors"
	"testing"
)

// TestParsePublicKeyStrict: a SubjectPublicKeyInfo is the algorithm and the
// key, and an AlgorithmIdentifier the OID and its parameters, with nothing
// after them (RFC 5280 §4.1, §4.1.1.2). FuzzParsePublicKey found both
// readers taking a trailing field.
func TestParsePublicKeyStrict(t *testing.T) {
	c := newFuzzCorpus(t)
	spki := c.issuers[len(c.issuers)-1].X509.RawSubjectPublicKeyInfo
	el, _, err := parseTLV(spki, 0)
	if err != nil {
		t.Fatal(err)
	}
	r := el.children()
	alg, err := r.next()
	if err != nil {
		t.Fatal(err)
	}
	bits, err := r.next()
	if err != nil {
		t.Fatal(err)
	}
	null := []byte{0x05, 0x00}
	for _, c := range []struct {
		name string
		der  []byte
		ok   bool
	}{
		{"as written", spki, true},
		{"a field after the key", derWrap(tagSequence, alg.full, bits.full, null), false},
		{"a field after the parameters", derWrap(tagSequence, derWrap(tagSequence, alg.content, null), bits.full), false},
	} {
		_, err := ParsePublicKey(c.der)
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrMalformed)) {
			t.Errorf("%s: %v, want ok %v", c.name, err, c.ok)
		}
	}
}
