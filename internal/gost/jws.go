package gost

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// JWS compact serialisation (RFC 7515) with the banking API's alg
// "gost34.10-2012" (banking.md 9.6). Hand-written: the format is three
// base64url parts, and the JOSE libraries would add a dependency only to be
// bypassed by a custom signer.

// JWSAlgorithm is the alg header value the banking API uses.
const JWSAlgorithm = "gost34.10-2012"

// Sentinel errors; test with errors.Is.
var (
	ErrJWSMalformed  = errors.New("gost: malformed JWS")
	ErrJWSMissingKid = errors.New("gost: JWS header has no kid")
	ErrJWSInvalidKid = errors.New("gost: JWS kid is not a UUID")
	ErrJWSWrongAlg   = errors.New("gost: JWS alg is not " + JWSAlgorithm)
	ErrJWSInvalidTyp = errors.New("gost: JWS typ is not valid UTF-8")

	// ErrJWSNotBase64URL reports a part that is not base64url without
	// padding (RFC 7515 §2), such as one Java's Base64.getUrlEncoder()
	// writes with its "=" kept; it wraps ErrJWSMalformed.
	ErrJWSNotBase64URL = fmt.Errorf("%w: a part is not unpadded base64url", ErrJWSMalformed)
)

// JWSHeader is the protected header. Only alg and kid are interpreted.
type JWSHeader struct {
	Alg  string   `json:"alg"`
	Kid  string   `json:"kid"`
	Typ  string   `json:"typ,omitempty"`
	Cty  string   `json:"cty,omitempty"`
	Crit []string `json:"crit,omitempty"`
}

// JWS is a parsed compact JWS.
type JWS struct {
	Header       JWSHeader
	Payload      []byte // decoded payload
	SigningInput string // ASCII B64URL(header) "." B64URL(payload), what the signature covers
	Signature    []byte // decoded signature, s‖r
}

// JWSOptions carries the [I] switch of banking.md 9.6: the signature byte
// layout of real tokens is undocumented. The default is s‖r big-endian, the
// CMS convention; Reversed reads and writes the whole value byte-reversed
// (r‖s, each little-endian), the other layout seen in GOST tooling.
type JWSOptions struct {
	Reversed bool
}

// SignJWS signs payload and returns the compact serialisation with header
// {"alg":"gost34.10-2012","kid":kid}; kid must be a UUID, as ParseJWS
// wants it.
func SignJWS(payload []byte, kid string, key *PrivateKey) (string, error) {
	return SignJWSWithOptions(payload, kid, key, JWSOptions{})
}

// SignJWSWithOptions is SignJWS with a chosen signature layout.
func SignJWSWithOptions(payload []byte, kid string, key *PrivateKey, opt JWSOptions) (string, error) {
	if err := checkSigningKid(kid); err != nil {
		return "", err
	}
	hdr, err := json.Marshal(JWSHeader{Alg: JWSAlgorithm, Kid: kid})
	if err != nil {
		return "", err
	}
	return signCompact(hdr, payload, key, opt)
}

// jwtHeader is the header of a signed JWT, fields in the order the
// provider's id_tokens show them (banking.md §3): {"typ":"JWT","alg":…}.
type jwtHeader struct {
	Typ string `json:"typ"`
	Alg string `json:"alg"`
	Kid string `json:"kid"`
}

// SignJWT signs a JWT's claims (id_tokens, user-info) with header
// {"typ":"JWT","alg":"gost34.10-2012","kid":kid}: the provider's id_tokens
// carry typ (banking.md §3), and kid names the bank's certificate as in
// its JWS answers, so one certificate verifies both. JWS transport
// signatures keep SignJWS's header, which §9.6 defines without typ.
func SignJWT(claims []byte, kid string, key *PrivateKey) (string, error) {
	if err := checkSigningKid(kid); err != nil {
		return "", err
	}
	hdr, err := json.Marshal(jwtHeader{Typ: "JWT", Alg: JWSAlgorithm, Kid: kid})
	if err != nil {
		return "", err
	}
	return signCompact(hdr, claims, key, JWSOptions{})
}

// checkSigningKid refuses, as ParseJWS does, a kid that is missing
// (ErrJWSMissingKid) or not a UUID (ErrJWSInvalidKid): signed, such a
// header would make a JWS that no reader here takes, the signer's own
// included, and the error would surface only at the receiver.
func checkSigningKid(kid string) error {
	if kid == "" {
		return ErrJWSMissingKid
	}
	if !IsCanonicalUUID(kid) {
		return fmt.Errorf("%w: %q", ErrJWSInvalidKid, kid)
	}
	return nil
}

// signCompact signs B64URL(hdr) "." B64URL(payload) and returns the
// compact serialisation.
func signCompact(hdr, payload []byte, key *PrivateKey, opt JWSOptions) (string, error) {
	if key == nil {
		return "", errors.New("gost: nil private key")
	}
	input := base64.RawURLEncoding.EncodeToString(hdr) + "." + base64.RawURLEncoding.EncodeToString(payload)
	h := newHashFor(key.Params)
	h.Write([]byte(input))
	sig, err := Sign(key, h.Sum(nil), rand.Reader)
	if err != nil {
		return "", err
	}
	if opt.Reversed {
		reverse(sig)
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

// ParseJWS splits and decodes a compact JWS and checks its header: kid must
// be a UUID (ErrJWSMissingKid, ErrJWSInvalidKid) and alg gost34.10-2012
// (ErrJWSWrongAlg), in that order. Structural problems give ErrJWSMalformed. The signature
// is not checked; call Verify with the certificate kid names.
func ParseJWS(compact string) (*JWS, error) {
	compact = strings.TrimSpace(compact)
	parts := strings.Split(compact, ".")
	if len(parts) != 3 {
		return nil, fmt.Errorf("%w: %d parts, want 3", ErrJWSMalformed, len(parts))
	}
	// The base64 decoder skips line breaks, which base64url's alphabet
	// has not (RFC 7515 §2, §7.1): a part broken over lines is not the
	// compact serialisation, and its signing input would not be the
	// one its sender signed.
	if strings.ContainsAny(compact, "\r\n") {
		return nil, fmt.Errorf("%w: line break inside", ErrJWSMalformed)
	}
	hdrJSON, err := base64.RawURLEncoding.Strict().DecodeString(parts[0])
	if err != nil {
		return nil, fmt.Errorf("%w: header: %v", ErrJWSNotBase64URL, err)
	}
	payload, err := base64.RawURLEncoding.Strict().DecodeString(parts[1])
	if err != nil {
		return nil, fmt.Errorf("%w: payload: %v", ErrJWSNotBase64URL, err)
	}
	sig, err := base64.RawURLEncoding.Strict().DecodeString(parts[2])
	if err != nil {
		return nil, fmt.Errorf("%w: signature: %v", ErrJWSNotBase64URL, err)
	}
	hdr, err := parseJWSHeader(hdrJSON)
	if err != nil {
		return nil, err
	}
	// The kid is checked before alg: banking.md 9.6 answers a missing or
	// malformed kid with WORKFLOW_FAULT, whatever alg the header names, and
	// a wrong alg is only this package's reading of a signature that
	// cannot be checked.
	if hdr.Kid == "" {
		return nil, ErrJWSMissingKid
	}
	if !IsCanonicalUUID(hdr.Kid) {
		return nil, fmt.Errorf("%w: %q", ErrJWSInvalidKid, hdr.Kid)
	}
	if hdr.Alg != JWSAlgorithm {
		return nil, fmt.Errorf("%w: %q", ErrJWSWrongAlg, hdr.Alg)
	}
	if len(sig) == 0 {
		return nil, fmt.Errorf("%w: empty signature", ErrJWSMalformed)
	}
	return &JWS{Header: hdr, Payload: payload, SigningInput: parts[0] + "." + parts[1], Signature: sig}, nil
}

// parseJWSHeader reads the protected header's parameters by their exact
// names. RFC 7515 §4 makes the names case-sensitive, where encoding/json
// matches a struct's fields without letter case: {"ALG":…,"Kid":…} was
// read as alg and kid, and of {"alg":"none","ALG":"gost34.10-2012"} the
// last spelling won. Any crit is refused (RFC 7515 §4.1.11): this reader
// understands no extension, and an empty list is not allowed either.
func parseJWSHeader(hdrJSON []byte) (JWSHeader, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(hdrJSON, &members); err != nil {
		return JWSHeader{}, fmt.Errorf("%w: header JSON: %v", ErrJWSMalformed, err)
	}
	if crit, ok := members["crit"]; ok {
		return JWSHeader{}, fmt.Errorf("%w: unsupported crit %s", ErrJWSMalformed, crit)
	}
	var hdr JWSHeader
	// The kid goes first: banking.md 9.6 answers a kid that is not a UUID
	// with WORKFLOW_FAULT, and a number or an array is not one any more
	// than a malformed string is, whatever the other members hold.
	for _, p := range []struct {
		name  string
		field *string
	}{{"kid", &hdr.Kid}, {"alg", &hdr.Alg}, {"typ", &hdr.Typ}, {"cty", &hdr.Cty}} {
		if raw, ok := members[p.name]; ok {
			if err := json.Unmarshal(raw, p.field); err != nil {
				if p.name == "kid" {
					return JWSHeader{}, fmt.Errorf("%w: not a string", ErrJWSInvalidKid)
				}
				return JWSHeader{}, fmt.Errorf("%w: header %s: %v", ErrJWSMalformed, p.name, err)
			}
		}
	}
	return hdr, nil
}

// Verify checks the signature with the certificate's key; failures wrap
// ErrBadSignature.
func (j *JWS) Verify(cert *Certificate) error {
	return j.VerifyWithOptions(cert, JWSOptions{})
}

// VerifyWithOptions is Verify with a chosen signature layout.
func (j *JWS) VerifyWithOptions(cert *Certificate, opt JWSOptions) error {
	if cert == nil || cert.PublicKey == nil {
		return fmt.Errorf("%w: no certificate", ErrBadSignature)
	}
	sig := append([]byte(nil), j.Signature...)
	if opt.Reversed {
		reverse(sig)
	}
	h := newHashFor(cert.PublicKey.Params)
	h.Write([]byte(j.SigningInput))
	return Verify(cert.PublicKey, h.Sum(nil), sig)
}

// IsCanonicalUUID accepts the canonical 8-4-4-4-12 hexadecimal form, any
// case, and nothing else (no braces, no urn: prefix, unlike uuid.Parse). It
// is the form of a JWS kid here and of the banking API's identifiers, and it
// runs without the regexp engine because banking checks it on every
// document created.
func IsCanonicalUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}
