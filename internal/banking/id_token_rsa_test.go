package banking

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/gost"
)

// jwtParts splits a compact JWT into its decoded header and claims.
func jwtParts(t *testing.T, tok string) (hdr map[string]string, claims map[string]any, input string, sig []byte) {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("%d parts", len(parts))
	}
	h, err1 := base64.RawURLEncoding.DecodeString(parts[0])
	c, err2 := base64.RawURLEncoding.DecodeString(parts[1])
	s, err3 := base64.RawURLEncoding.DecodeString(parts[2])
	if err1 != nil || err2 != nil || err3 != nil {
		t.Fatal(err1, err2, err3)
	}
	if err := json.Unmarshal(h, &hdr); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(c, &claims); err != nil {
		t.Fatal(err)
	}
	return hdr, claims, parts[0] + "." + parts[1], s
}

// TestIDTokenSignerAlgorithms: both id_token algorithms give the header
// {"typ":"JWT","alg",kid} of reference §3 and verify, the GOST one with
// the bank's certificate and the RS256 one with the RSA public key.
func TestIDTokenSignerAlgorithms(t *testing.T) {
	claims := map[string]any{"sub": "u", "aud": "c"}

	bk, err := NewBankKey(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	tok, err := NewIDTokenSigner("iss", bk).Sign(claims)
	if err != nil {
		t.Fatal(err)
	}
	hdr, got, _, _ := jwtParts(t, tok)
	if hdr["typ"] != "JWT" || hdr["alg"] != "gost34.10-2012" || hdr["kid"] != bk.Kid || len(hdr) != 3 || got["sub"] != "u" {
		t.Fatalf("GOST header %v claims %v", hdr, got)
	}
	j, err := gost.ParseJWS(tok)
	if err != nil || j.Verify(bk.Cert) != nil {
		t.Fatalf("GOST id_token does not verify: %v", err)
	}

	rk, err := NewIDTokenRSAKey()
	if err != nil {
		t.Fatal(err)
	}
	s := NewRS256IDTokenSigner("iss", rk)
	tok, err = s.Sign(claims)
	if err != nil {
		t.Fatal(err)
	}
	hdr, got, input, sig := jwtParts(t, tok)
	if hdr["typ"] != "JWT" || hdr["alg"] != "RS256" || hdr["kid"] != RSAKeyID(&rk.PublicKey) || len(hdr) != 3 || got["aud"] != "c" {
		t.Fatalf("RS256 header %v claims %v", hdr, got)
	}
	sum := sha256.Sum256([]byte(input))
	if err := rsa.VerifyPKCS1v15(&rk.PublicKey, crypto.SHA256, sum[:], sig); err != nil {
		t.Fatalf("RS256 id_token does not verify: %v", err)
	}
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	if rsa.VerifyPKCS1v15(&other.PublicKey, crypto.SHA256, sum[:], sig) == nil {
		t.Fatal("verifies under another key")
	}
	if _, err := (&IDTokenSigner{Alg: "HS256"}).Sign(claims); err == nil {
		t.Fatal("signed with an unknown alg")
	}
	if !ValidIDTokenAlg("RS256") || !ValidIDTokenAlg("gost34.10-2012") || ValidIDTokenAlg("rs256") {
		t.Fatal("ValidIDTokenAlg")
	}
}

// The RS256 key's PEM: a generated key is 2048 bits and round-trips
// through its PKCS#8 form, the PKCS#1 form operators also have parses, and
// anything else is an error that never quotes the file.
func TestIDTokenRSAKeyPEM(t *testing.T) {
	k, err := NewIDTokenRSAKey()
	if err != nil {
		t.Fatal(err)
	}
	if k.N.BitLen() != 2048 {
		t.Fatalf("%d-bit key", k.N.BitLen())
	}
	pkcs8, err := MarshalIDTokenRSAKeyPEM(k)
	if err != nil {
		t.Fatal(err)
	}
	pkcs1 := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
	for _, tc := range []struct {
		name    string
		data    []byte
		wantErr string
	}{
		{"PKCS#8", pkcs8, ""},
		{"PKCS#1", pkcs1, ""},
		{"a certificate", []byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"), "unexpected PEM block"},
		{"a broken PKCS#8 block", []byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"), "does not parse"},
		{"no PEM", []byte("AAAA"), "no PEM block"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseIDTokenRSAKeyPEM(tc.data)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), "AAAA") {
					t.Fatalf("err %v, want %q without the file's text", err, tc.wantErr)
				}
				return
			}
			if err != nil || !got.Equal(k) {
				t.Fatalf("parsed another key: %v", err)
			}
		})
	}
}

// RSAKeyID is RFC 7638's thumbprint: the RFC's own example key and value.
func TestRSAKeyID(t *testing.T) {
	n, _ := base64.RawURLEncoding.DecodeString("0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw")
	pub := rsa.PublicKey{N: new(big.Int).SetBytes(n), E: 65537}
	if got := RSAKeyID(&pub); got != "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs" {
		t.Fatalf("thumbprint %s", got)
	}
}
