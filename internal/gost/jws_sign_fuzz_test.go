package gost

import (
	"bytes"
	"errors"
	"testing"
	"unicode/utf8"
)

// FuzzJWSSignVerify holds the JWS signers to the reader: whatever payload
// and header fields signing accepts, ParseJWS reads the result back with the
// same payload, kid and typ, and the signer's certificate verifies it in the
// layout it was signed in; and the same serialisation with any one byte
// changed is refused by ParseJWS or fails verification, so that nothing in
// the compact form escapes the signature.
//
// signer picks SignJWS, SignJWSTyped, SignJWT or the reversed layout (bits
// 0-1), on a 256- or a 512-bit key (bit 2), and the fuzzed kid (bit 3) or a
// UUID, in upper case with bit 4: a fuzzed kid is seldom a UUID, and signing
// refuses it before any signature is made. pos and flip say which byte
// changes and how (flip 0 changes it by 1). The payload is at most 256
// bytes: a longer one reaches no branch more and costs a Streebog pass per
// execution.
func FuzzJWSSignVerify(f *testing.F) {
	const kid = "f47ac10b-58cc-4372-a567-0e02b2c3d479"
	for i, p := range []string{`{"businessCardId":"123","limit":"1000.00"}`, "", "\x00\xff", `{"a":"ß"}`} {
		f.Add([]byte(p), kid, "bank-answer", uint8(i*5), uint16(i*7), uint8(1))
	}
	f.Add([]byte(`{}`), "cert-1", "", uint8(8), uint16(0), uint8(0))
	f.Add([]byte(`{}`), "", "\xff", uint8(1|16), uint16(40), uint8(0x20))
	type keyPair struct {
		key  *PrivateKey
		cert *Certificate
	}
	var keys [2]keyPair
	for i, params := range []*Params{TC26256A, TC26512B} {
		keys[i].key, keys[i].cert = testKeyAndCert(f, params)
	}
	f.Fuzz(func(t *testing.T, payload []byte, kid, typ string, signer uint8, pos uint16, flip uint8) {
		if len(payload) > 256 || len(kid) > 64 || len(typ) > 64 {
			return
		}
		kp := keys[signer>>2&1]
		if signer&8 == 0 {
			kid = "f47ac10b-58cc-4372-a567-0e02b2c3d479"
			if signer&16 != 0 {
				kid = "F47AC10B-58CC-4372-A567-0E02B2C3D479"
			}
		}
		var opt JWSOptions
		var tok string
		var err error
		wantTyp := ""
		switch signer & 3 {
		case 0:
			tok, err = SignJWS(payload, kid, kp.key)
		case 1:
			tok, err = SignJWSTyped(payload, kid, typ, kp.key)
			wantTyp = typ
		case 2:
			tok, err = SignJWT(payload, kid, kp.key)
			wantTyp = "JWT"
		case 3:
			opt = JWSOptions{Reversed: true}
			tok, err = SignJWSWithOptions(payload, kid, kp.key, opt)
		}
		if err != nil {
			if !errors.Is(err, ErrJWSMissingKid) && !errors.Is(err, ErrJWSInvalidKid) &&
				!(signer&3 == 1 && !utf8.ValidString(typ) && errors.Is(err, ErrJWSInvalidTyp)) {
				t.Fatalf("signing with kid %q: %v", kid, err)
			}
			return
		}
		j, err := ParseJWS(tok)
		if err != nil {
			t.Fatalf("signed with kid %q, typ %q: ParseJWS(%q): %v", kid, typ, tok, err)
		}
		// SignJWSTyped refuses a typ that is not valid UTF-8, so every typ
		// signed comes back as it was given.
		if !bytes.Equal(j.Payload, payload) || j.Header.Kid != kid || j.Header.Alg != JWSAlgorithm ||
			j.Header.Typ != wantTyp {
			t.Fatalf("signed %q kid %q typ %q, read %q %+v", payload, kid, wantTyp, j.Payload, j.Header)
		}
		if err := j.VerifyWithOptions(kp.cert, opt); err != nil {
			t.Fatalf("%q does not verify: %v", tok, err)
		}

		b := []byte(tok)
		i := int(pos) % len(b)
		if flip == 0 {
			flip = 1
		}
		b[i] ^= flip
		changed, err := ParseJWS(string(b))
		if err != nil {
			return
		}
		if err := changed.VerifyWithOptions(kp.cert, opt); err == nil {
			t.Fatalf("%q with byte %d changed to %q (%q) verifies", tok, i, b[i], b)
		}
	})
}
