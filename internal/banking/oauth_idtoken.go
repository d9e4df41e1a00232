package banking

import (
	"encoding/json"
	"slices"
	"time"

	"partnerapi/internal/gost"
)

// IDTokenSigner signs id_tokens and user-info JWTs with GOST R 34.10-2012
// (alg "gost34.10-2012", reference §3).
type IDTokenSigner struct {
	Key    *gost.PrivateKey
	Kid    string
	Issuer string
}

// NewIDTokenSigner signs with the bank's key (bank_key.go), so partners
// verify id_tokens with the same certificate as JWS answers, and tokens
// issued before a restart or by another instance still verify.
func NewIDTokenSigner(issuer string, key *BankKey) *IDTokenSigner {
	return &IDTokenSigner{Key: key.Key, Kid: key.Kid, Issuer: issuer}
}

// Sign returns the compact JWS of claims.
func (s *IDTokenSigner) Sign(claims any) (string, error) {
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	return gost.SignJWS(payload, s.Kid, s.Key)
}

type idTokenClaims struct {
	Iss      string `json:"iss"`
	Sub      string `json:"sub"`
	Aud      string `json:"aud"`
	Exp      int64  `json:"exp"`
	Iat      int64  `json:"iat"`
	AuthTime int64  `json:"auth_time"`
	Nonce    string `json:"nonce,omitempty"`
}

// idToken is the OIDC id_token of an openid grant; empty without a signer
// or without the openid scope.
func (id *Identity) idToken(c AuthCode, now time.Time) (string, error) {
	if id.IDTokens == nil || !slices.Contains(c.Scopes, ScopeOpenID) {
		return "", nil
	}
	return id.IDTokens.Sign(idTokenClaims{Iss: id.IDTokens.Issuer, Sub: c.UserID, Aud: c.ClientID,
		Exp: now.Add(AccessTokenTTL).Unix(), Iat: now.Unix(), AuthTime: now.Unix(), Nonce: c.Nonce})
}
