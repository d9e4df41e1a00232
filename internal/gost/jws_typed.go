package gost

import "encoding/json"

// SignJWSTyped is SignJWS with a typ in the protected header,
// {"alg":"gost34.10-2012","kid":kid,"typ":typ}. One key that signs
// documents of several purposes names the purpose there (RFC 8725 §3.11),
// so a receiver can refuse a document signed for another one instead of
// taking it for what it expects.
func SignJWSTyped(payload []byte, kid, typ string, key *PrivateKey) (string, error) {
	if err := checkSigningKid(kid); err != nil {
		return "", err
	}
	hdr, err := json.Marshal(JWSHeader{Alg: JWSAlgorithm, Kid: kid, Typ: typ})
	if err != nil {
		return "", err
	}
	return signCompact(hdr, payload, key, JWSOptions{})
}
