package gost

import (
	"encoding/json"
	"unicode/utf8"
)

// SignJWSTyped is SignJWS with a typ in the protected header,
// {"alg":"gost34.10-2012","kid":kid,"typ":typ}. One key that signs
// documents of several purposes names the purpose there (RFC 8725 §3.11),
// so a receiver can refuse a document signed for another one instead of
// taking it for what it expects.
func SignJWSTyped(payload []byte, kid, typ string, key *PrivateKey) (string, error) {
	if err := checkSigningKid(kid); err != nil {
		return "", err
	}
	// encoding/json writes each invalid byte as U+FFFD, so such a typ would
	// be signed as another string than the caller gave, and the receiver
	// would compare its purpose against text nobody chose.
	if !utf8.ValidString(typ) {
		return "", ErrJWSInvalidTyp
	}
	hdr, err := json.Marshal(JWSHeader{Alg: JWSAlgorithm, Kid: kid, Typ: typ})
	if err != nil {
		return "", err
	}
	return signCompact(hdr, payload, key, JWSOptions{})
}
