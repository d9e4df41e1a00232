package gost

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"unicode"
)

// FuzzParseJWSReference holds ParseJWS, the reader of every application/jose
// request body, to RFC 7515's compact serialisation as read by
// referenceJWS, written apart from it: the same verdict on any body, and on
// an accepted one the same payload, signature, signing input and kid.
//
// The body is built from a fuzzed header, payload and signature, each
// base64url-encoded, and then changed as form says (padding, the standard
// alphabet, white space, a fourth part), so that the fuzzer reaches the
// header's JSON, where random text seldom gets past the base64. Form 7
// takes the header bytes as the whole body instead. Each part is at most
// 256 bytes: a longer one reaches no branch a short one does not, and only
// slows the minimizer.
func FuzzParseJWSReference(f *testing.F) {
	const kid = "f47ac10b-58cc-4372-a567-0e02b2c3d479"
	for i, hdr := range []string{
		`{"alg":"gost34.10-2012","kid":"` + kid + `"}`,
		`{"typ":"JWT","alg":"gost34.10-2012","kid":"` + kid + `"}`,
		`{"alg":"gost34.10-2012","kid":"` + kid + `","crit":["exp"]}`,
		`{"alg":"gost34.10-2012","kid":"` + kid + `","crit":[]}`,
		`{"ALG":"gost34.10-2012","Kid":"` + kid + `"}`,
		`{"alg":"none","alg":"gost34.10-2012","kid":"` + kid + `"}`,
		`{"alg":"gost34.10-2012","kid":null}`,
		`{"alg":"gost34.10-2012","kid":"` + kid + `","typ":7}`,
		`null`,
	} {
		f.Add([]byte(hdr), []byte(`{"amount":1}`), []byte{1, 2, 3}, uint8(0))
		f.Add([]byte(hdr), []byte(`{"amount":1}`), []byte{1, 2, 3}, uint8(1+i%6))
	}
	f.Add([]byte("eyJhbGciOiJnb3N0MzQuMTAtMjAxMiIsImtpZCI6ImY0N2FjMTBiLTU4Y2MtNDM3Mi1hNTY3LTBlMDJiMmMzZDQ3OSJ9.e30.AAAA"), []byte{}, []byte{}, uint8(7))
	f.Fuzz(func(t *testing.T, hdr, payload, sig []byte, form uint8) {
		if len(hdr) > 256 || len(payload) > 256 || len(sig) > 256 {
			return
		}
		compact := jwsForm(hdr, payload, sig, form)
		want, wantOK := referenceJWS(compact)
		got, err := ParseJWS(compact)
		if (err == nil) != wantOK {
			t.Fatalf("ParseJWS(%q): error %v, the reference accepts: %v", compact, err, wantOK)
		}
		if err != nil {
			return
		}
		if got.Header.Kid != want.Header.Kid || got.Header.Alg != JWSAlgorithm || got.SigningInput != want.SigningInput ||
			!bytes.Equal(got.Payload, want.Payload) || !bytes.Equal(got.Signature, want.Signature) {
			t.Fatalf("ParseJWS(%q) = %+v, the reference reads %+v", compact, got, want)
		}
	})
}

// jwsForm is the compact JWS of header, payload and signature in one of
// the forms a client might send: as RFC 7515 has it (0), padded (1), in
// the standard base64 alphabet (2), inside white space (3), with a fourth
// part (4), with a part left empty (5), or after a line break (6); form 7
// is the header bytes as the whole body.
func jwsForm(hdr, payload, sig []byte, form uint8) string {
	enc := base64.RawURLEncoding
	switch form % 8 {
	case 1:
		enc = base64.URLEncoding
	case 2:
		enc = base64.RawStdEncoding
	case 7:
		return string(hdr)
	}
	parts := []string{enc.EncodeToString(hdr), enc.EncodeToString(payload), enc.EncodeToString(sig)}
	switch form % 8 {
	case 4:
		parts = append(parts, parts[2])
	case 5:
		parts[1] = ""
	}
	compact := strings.Join(parts, ".")
	switch form % 8 {
	case 3:
		compact = " \t" + compact + "\r\n"
	case 6:
		compact = compact[:len(compact)/2] + "\n" + compact[len(compact)/2:]
	}
	return compact
}

// referenceJWS reads a compact JWS as RFC 7515 §7.1 and §4.1 describe it,
// with the banking API's header rules (banking.md 9.6): three parts of
// unpadded base64url around surrounding white space, a protected header
// that is a JSON object whose member names are matched exactly (§4: they
// are case-sensitive; of a repeated name the last counts, as §4 allows),
// a kid that is a canonical UUID, alg gost34.10-2012, no crit (this
// reader understands no extension, and an empty list is not allowed
// either, §4.1.11), typ and cty strings when present, and a signature.
func referenceJWS(compact string) (JWS, bool) {
	compact = strings.TrimFunc(compact, unicode.IsSpace)
	h, rest, ok1 := strings.Cut(compact, ".")
	p, s, ok2 := strings.Cut(rest, ".")
	if !ok1 || !ok2 || strings.Contains(s, ".") {
		return JWS{}, false
	}
	var dec [3][]byte
	for i, part := range []string{h, p, s} {
		for _, c := range []byte(part) {
			if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return JWS{}, false
			}
		}
		b, err := base64.RawURLEncoding.Strict().DecodeString(part)
		if err != nil {
			return JWS{}, false
		}
		dec[i] = b
	}
	var members map[string]any
	if err := json.Unmarshal(dec[0], &members); err != nil || members == nil {
		return JWS{}, false
	}
	if _, ok := members["crit"]; ok {
		return JWS{}, false
	}
	for _, name := range []string{"typ", "cty"} {
		if v, ok := members[name]; ok && v != nil {
			if _, isString := v.(string); !isString {
				return JWS{}, false
			}
		}
	}
	kid, _ := members["kid"].(string)
	alg, _ := members["alg"].(string)
	if !canonicalUUID.MatchString(kid) || alg != JWSAlgorithm || len(dec[2]) == 0 {
		return JWS{}, false
	}
	return JWS{Header: JWSHeader{Alg: alg, Kid: kid}, Payload: dec[1], SigningInput: h + "." + p, Signature: dec[2]}, true
}
