package gost

import (
	"bytes"
	"testing"
)

// FuzzParsePublicKey holds the SubjectPublicKeyInfo reader, which reads
// the key of every certificate and request a client sends, to RFC 5280
// §4.1 and RFC 9215 §4: an accepted SPKI is one SEQUENCE of exactly an
// AlgorithmIdentifier (an OID and one parameters SEQUENCE) and a BIT STRING wrapping one OCTET STRING of X‖Y;
// the key is on its curve; and what MarshalPublicKey writes for it reads
// back as the same key with the same X‖Y.
func FuzzParsePublicKey(f *testing.F) {
	c := newFuzzCorpus(f)
	for _, cert := range c.issuers {
		f.Add(cert.X509.RawSubjectPublicKeyInfo)
	}
	f.Add([]byte{0x30, 0x00})
	f.Fuzz(func(t *testing.T, spki []byte) {
		pub, err := ParsePublicKey(spki)
		if err != nil {
			return
		}
		if !pub.Params.IsOnCurve(pub.X, pub.Y) {
			t.Fatal("accepted a key off its curve")
		}
		// The outer SEQUENCE holds the two fields and nothing else.
		el, n, err := parseTLV(spki, 0)
		if err != nil || n != len(spki) || el.tag != tagSequence {
			t.Fatalf("accepted %x, which is not one SEQUENCE", spki)
		}
		r := el.children()
		alg, err := r.read(tagSequence)
		if err != nil {
			t.Fatalf("accepted %x without an AlgorithmIdentifier: %v", spki, err)
		}
		// AlgorithmIdentifier: the OID and one parameters element.
		ar := alg.children()
		if _, err := ar.read(tagOID); err != nil {
			t.Fatalf("accepted %x, whose AlgorithmIdentifier has no OID", spki)
		}
		if _, err := ar.read(tagSequence); err != nil || !ar.empty() {
			t.Fatalf("accepted %x, whose AlgorithmIdentifier is not an OID and one SEQUENCE of parameters", spki)
		}
		bits, err := r.read(tagBitString)
		if err != nil || !r.empty() {
			t.Fatalf("accepted %x, whose SEQUENCE is not algorithm and BIT STRING alone", spki)
		}
		raw := MarshalPublicKeyRaw(pub)
		if !bytes.Equal(bits.content, append([]byte{0}, derWrap(tagOctetString, raw)...)) {
			t.Fatalf("accepted %x, whose BIT STRING is not one OCTET STRING of X‖Y", spki)
		}
		again, err := ParsePublicKey(MarshalPublicKey(pub))
		if err != nil || !again.Equal(pub) || !bytes.Equal(MarshalPublicKeyRaw(again), raw) {
			t.Fatalf("key of %x does not read back from MarshalPublicKey: %v", spki, err)
		}
		if again, err := ParsePublicKeyRaw(pub.Params, raw); err != nil || !again.Equal(pub) {
			t.Fatalf("X‖Y of %x does not read back: %v", spki, err)
		}
	})
}
