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
	"errors"
	"fmt"
	"math/big"
)

// idTokenRSABits is the size of a generated RS256 key: 2048 bits is what
// RFC 7518 §3.3 requires at least and what OIDC providers issue.
const idTokenRSABits = 2048

// ParseIDTokenRSAKeyPEM reads an RSA private key ("PRIVATE KEY", PKCS#8, or
// "RSA PRIVATE KEY", PKCS#1) from PEM. Errors never quote the key.
func ParseIDTokenRSAKeyPEM(data []byte) (*rsa.PrivateKey, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("no PEM block")
	}
	switch block.Type {
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, errors.New("PRIVATE KEY does not parse as PKCS#8")
		}
		rk, ok := k.(*rsa.PrivateKey)
		if !ok {
			return nil, errors.New("PRIVATE KEY is not an RSA key")
		}
		return rk, nil
	case "RSA PRIVATE KEY":
		k, err := x509.ParsePKCS1PrivateKey(block.Bytes)
		if err != nil {
			return nil, errors.New("RSA PRIVATE KEY does not parse as PKCS#1")
		}
		return k, nil
	}
	return nil, fmt.Errorf("unexpected PEM block %q (want PRIVATE KEY)", block.Type)
}

// NewIDTokenRSAKey generates an RS256 key of idTokenRSABits.
func NewIDTokenRSAKey() (*rsa.PrivateKey, error) {
	return rsa.GenerateKey(rand.Reader, idTokenRSABits)
}

// MarshalIDTokenRSAKeyPEM returns k as a PKCS#8 "PRIVATE KEY" PEM block,
// the form ParseIDTokenRSAKeyPEM reads first and OpenSSL writes.
func MarshalIDTokenRSAKeyPEM(k *rsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// RSAKeyID is the kid of an RS256 key: its RFC 7638 JWK thumbprint
// (base64url SHA-256 of {"e","kty","n"}), which any party holding the
// public key computes alike.
func RSAKeyID(pub *rsa.PublicKey) string {
	b64 := func(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
	e := big.NewInt(int64(pub.E)).Bytes()
	// json.Marshal of a struct keeps field order, which RFC 7638 fixes as
	// lexicographic: e, kty, n.
	canon, _ := json.Marshal(struct {
		E   string `json:"e"`
		Kty string `json:"kty"`
		N   string `json:"n"`
	}{b64(e), "RSA", b64(pub.N.Bytes())})
	sum := sha256.Sum256(canon)
	return b64(sum[:])
}

// signRS256 returns the compact JWT of claims under key, header
// {"typ":"JWT","alg":"RS256","kid":kid}.
func signRS256(claims []byte, kid string, key *rsa.PrivateKey) (string, error) {
	hdr, err := json.Marshal(struct {
		Typ string `json:"typ"`
		Alg string `json:"alg"`
		Kid string `json:"kid"`
	}{"JWT", IDTokenRS256, kid})
	if err != nil {
		return "", err
	}
	input := base64.RawURLEncoding.EncodeToString(hdr) + "." + base64.RawURLEncoding.EncodeToString(claims)
	sum := sha256.Sum256([]byte(input))
	sig, err := rsa.SignPKCS1v15(nil, key, crypto.SHA256, sum[:])
	if err != nil {
		return "", err
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}
