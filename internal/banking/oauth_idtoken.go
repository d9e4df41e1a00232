package banking

import (
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"partnerapi/internal/gost"
)

// id_token algorithms (reference §3, §15 #12): the provider signs with
// GOST R 34.10-2012; some newer SDK builds expect RS256, so it is a choice.
const (
	IDTokenGOST  = gost.JWSAlgorithm // "gost34.10-2012"
	IDTokenRS256 = "RS256"
)

// ValidIDTokenAlg reports whether alg is an id_token algorithm served.
func ValidIDTokenAlg(alg string) bool { return alg == IDTokenGOST || alg == IDTokenRS256 }

// IDTokenSigner signs id_tokens and user-info JWTs, header
// {"typ":"JWT","alg":Alg,"kid":Kid}: with the bank's GOST key (alg
// gost34.10-2012) or with an RSA key (RS256).
type IDTokenSigner struct {
	Alg    string
	Key    *gost.PrivateKey // gost34.10-2012
	RSA    *rsa.PrivateKey  // RS256
	Kid    string
	Issuer string
}

// NewIDTokenSigner signs with the bank's key (bank_key.go), so partners
// verify id_tokens with the same certificate as JWS answers, and tokens
// issued before a restart or by another instance still verify.
func NewIDTokenSigner(issuer string, key *BankKey) *IDTokenSigner {
	return &IDTokenSigner{Alg: IDTokenGOST, Key: key.Key, Kid: key.Kid, Issuer: issuer}
}

// NewRS256IDTokenSigner signs RS256 with key (id_token_rsa.go), kid its
// JWK thumbprint.
func NewRS256IDTokenSigner(issuer string, key *rsa.PrivateKey) *IDTokenSigner {
	return &IDTokenSigner{Alg: IDTokenRS256, RSA: key, Kid: RSAKeyID(&key.PublicKey), Issuer: issuer}
}

// Sign returns the compact JWT of claims.
func (s *IDTokenSigner) Sign(claims any) (string, error) {
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	switch s.Alg {
	case IDTokenGOST, "":
		return gost.SignJWT(payload, s.Kid, s.Key)
	case IDTokenRS256:
		if s.RSA == nil {
			return "", errors.New("id_token: RS256 without an RSA key")
		}
		return signRS256(payload, s.Kid, s.RSA)
	}
	return "", fmt.Errorf("id_token: unknown alg %q", s.Alg)
}

type idTokenClaims struct {
	Iss      string `json:"iss"`
	Sub      string `json:"sub"`
	Aud      string `json:"aud"`
	Exp      int64  `json:"exp"`
	Iat      int64  `json:"iat"`
	AuthTime int64  `json:"auth_time,omitempty"` // the login's time; unknown, so absent, after a refresh (OIDC Core §12.2)
	Nonce    string `json:"nonce,omitempty"`
}

// idToken is the OIDC id_token of an openid grant; empty without a signer
// or without the openid scope. authTime is the login's time, zero when it
// is not known (a refresh), and the claim is then left out.
func (id *Identity) idToken(clientID, userID string, scopes []string, nonce string, authTime, now time.Time) (string, error) {
	if id.IDTokens == nil || !slices.Contains(scopes, ScopeOpenID) {
		return "", nil
	}
	claims := idTokenClaims{Iss: id.IDTokens.Issuer, Sub: userID, Aud: clientID,
		Exp: now.Add(id.accessTTL()).Unix(), Iat: now.Unix(), Nonce: nonce}
	if !authTime.IsZero() {
		claims.AuthTime = authTime.Unix()
	}
	return id.IDTokens.Sign(claims)
}
