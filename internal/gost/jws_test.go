package gost

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

const testKid = "f47ac10b-58cc-4372-a567-0e02b2c3d479"

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func TestJWSRoundTrip(t *testing.T) {
	payload := []byte(`{"businessCardId":"123","limit":"1000.00"}`)
	for _, params := range []*Params{TC26256A, TC26512B} {
		for _, opt := range []JWSOptions{{}, {Reversed: true}} {
			key, cert := testKeyAndCert(t, params)
			tok, err := SignJWSWithOptions(payload, testKid, key, opt)
			if err != nil {
				t.Fatal(err)
			}
			j, err := ParseJWS(tok)
			if err != nil {
				t.Fatal(err)
			}
			if j.Header.Alg != JWSAlgorithm || j.Header.Kid != testKid || string(j.Payload) != string(payload) {
				t.Fatalf("parsed %+v", j)
			}
			// The header is exactly the documented one (banking.md 9.6).
			if wantHdr := b64(`{"alg":"gost34.10-2012","kid":"` + testKid + `"}`); !strings.HasPrefix(tok, wantHdr+".") {
				t.Fatalf("header part %q, want %q", strings.Split(tok, ".")[0], wantHdr)
			}
			if len(j.Signature) != 2*params.Size() || j.SigningInput != tok[:strings.LastIndex(tok, ".")] {
				t.Fatalf("signature %d bytes, input %q", len(j.Signature), j.SigningInput)
			}
			if err := j.VerifyWithOptions(cert, opt); err != nil {
				t.Fatal(err)
			}
			// The other layout does not verify, so the switch is meaningful.
			if err := j.VerifyWithOptions(cert, JWSOptions{Reversed: !opt.Reversed}); !errors.Is(err, ErrBadSignature) {
				t.Fatalf("wrong layout: %v", err)
			}
			_, other := testKeyAndCert(t, params)
			if err := j.VerifyWithOptions(other, opt); !errors.Is(err, ErrBadSignature) {
				t.Fatalf("other certificate: %v", err)
			}
		}
	}
}

func TestJWSErrors(t *testing.T) {
	key, cert := testKeyAndCert(t, TC26256A)
	good, err := SignJWS([]byte(`{"a":1}`), testKid, key)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(good, ".")
	tampered := parts[0] + "." + b64(`{"a":2}`) + "." + parts[2]
	tests := []struct {
		name  string
		token string
		want  error
	}{
		{"two parts", parts[0] + "." + parts[1], ErrJWSMalformed},
		{"four parts", good + ".x", ErrJWSMalformed},
		{"bad header base64", "!!!." + parts[1] + "." + parts[2], ErrJWSMalformed},
		{"padded payload", parts[0] + "." + parts[1] + "=." + parts[2], ErrJWSMalformed},
		{"bad signature base64", parts[0] + "." + parts[1] + ".a*b", ErrJWSMalformed},
		{"header not JSON", b64("nope") + "." + parts[1] + "." + parts[2], ErrJWSMalformed},
		{"empty signature", parts[0] + "." + parts[1] + ".", ErrJWSMalformed},
		{"crit", b64(`{"alg":"gost34.10-2012","kid":"`+testKid+`","crit":["b64"]}`) + "." + parts[1] + "." + parts[2], ErrJWSMalformed},
		{"missing kid", b64(`{"alg":"gost34.10-2012"}`) + "." + parts[1] + "." + parts[2], ErrJWSMissingKid},
		{"kid not uuid", b64(`{"alg":"gost34.10-2012","kid":"cert-1"}`) + "." + parts[1] + "." + parts[2], ErrJWSInvalidKid},
		{"wrong alg", b64(`{"alg":"RS256","kid":"`+testKid+`"}`) + "." + parts[1] + "." + parts[2], ErrJWSWrongAlg},
		{"alg none", b64(`{"alg":"none","kid":"`+testKid+`"}`) + "." + parts[1] + "." + parts[2], ErrJWSWrongAlg},
		// The kid rule comes first (banking.md 9.6 answers a missing or
		// malformed kid whatever the rest of the header says).
		{"wrong alg, missing kid", b64(`{"alg":"RS256"}`) + "." + parts[1] + "." + parts[2], ErrJWSMissingKid},
		{"wrong alg, kid not uuid", b64(`{"alg":"RS256","kid":"cert-1"}`) + "." + parts[1] + "." + parts[2], ErrJWSInvalidKid},
		// A kid of another JSON type is no UUID either, whatever the alg.
		{"kid a number", b64(`{"alg":"gost34.10-2012","kid":123}`) + "." + parts[1] + "." + parts[2], ErrJWSInvalidKid},
		{"kid an array, alg a number", b64(`{"alg":7,"kid":["`+testKid+`"]}`) + "." + parts[1] + "." + parts[2], ErrJWSInvalidKid},
		{"kid null", b64(`{"alg":"gost34.10-2012","kid":null}`) + "." + parts[1] + "." + parts[2], ErrJWSMissingKid},
		{"alg a number", b64(`{"alg":7,"kid":"`+testKid+`"}`) + "." + parts[1] + "." + parts[2], ErrJWSMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ParseJWS(tc.token); !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
	j, err := ParseJWS(tampered)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Verify(cert); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("tampered payload: %v", err)
	}
	if _, err := SignJWS(nil, "", key); !errors.Is(err, ErrJWSMissingKid) {
		t.Fatalf("signing without kid: %v", err)
	}
	// A kid ParseJWS refuses is refused when signing too, not left for
	// the receiver to find.
	for _, sign := range []func(kid string) (string, error){
		func(kid string) (string, error) { return SignJWS(nil, kid, key) },
		func(kid string) (string, error) { return SignJWSTyped(nil, kid, "t", key) },
		func(kid string) (string, error) { return SignJWT(nil, kid, key) },
	} {
		if _, err := sign("cert-1"); !errors.Is(err, ErrJWSInvalidKid) {
			t.Fatalf("signing with kid cert-1: %v", err)
		}
	}
}

// TestSignJWSTypedRefusesInvalidTyp holds SignJWSTyped to signing only the
// typ it was given: encoding/json would write an invalid byte as U+FFFD, and
// the signature would then cover a purpose the caller never named.
func TestSignJWSTypedRefusesInvalidTyp(t *testing.T) {
	key, _ := testKeyAndCert(t, TC26256A)
	const kid = "f47ac10b-58cc-4372-a567-0e02b2c3d479"
	for _, tc := range []struct {
		typ  string
		want error
	}{
		{"bank-answer", nil},
		{"ответ-банка", nil},
		{"", nil},
		{"bank\xff", ErrJWSInvalidTyp},
		{"\xc3", ErrJWSInvalidTyp},
		{"a\xed\xa0\x80", ErrJWSInvalidTyp}, // a surrogate's UTF-8 form
	} {
		tok, err := SignJWSTyped([]byte(`{}`), kid, tc.typ, key)
		if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
			t.Fatalf("typ %q: err = %v, want %v", tc.typ, err, tc.want)
		}
		if err != nil {
			continue
		}
		j, err := ParseJWS(tok)
		if err != nil || j.Header.Typ != tc.typ {
			t.Fatalf("typ %q: read back %+v, %v", tc.typ, j, err)
		}
	}
}
