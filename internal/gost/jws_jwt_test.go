package gost

import (
	"errors"
	"strings"
	"testing"
)

// TestSignJWT: a JWT's header is {"typ":"JWT","alg":"gost34.10-2012","kid"}
// (banking.md §3 shows typ and alg; kid names the certificate), ParseJWS
// reads it and the certificate verifies it; SignJWS's header stays without
// typ (TestJWSRoundTrip).
func TestSignJWT(t *testing.T) {
	key, cert := testKeyAndCert(t, TC26256A)
	claims := []byte(`{"sub":"u","aud":"c"}`)
	tok, err := SignJWT(claims, testKid, key)
	if err != nil {
		t.Fatal(err)
	}
	if want := b64(`{"typ":"JWT","alg":"gost34.10-2012","kid":"` + testKid + `"}`); !strings.HasPrefix(tok, want+".") {
		t.Fatalf("header part %q, want %q", strings.Split(tok, ".")[0], want)
	}
	j, err := ParseJWS(tok)
	if err != nil || j.Header.Typ != "JWT" || string(j.Payload) != string(claims) || len(j.Signature) != 64 {
		t.Fatalf("parsed %+v %v", j, err)
	}
	if err := j.Verify(cert); err != nil {
		t.Fatal(err)
	}
	if _, err := SignJWT(claims, "", key); !errors.Is(err, ErrJWSMissingKid) {
		t.Fatalf("no kid: %v", err)
	}
	if _, err := SignJWT(claims, testKid, nil); err == nil {
		t.Fatal("signed without a key")
	}
}
