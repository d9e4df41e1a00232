// Package bearer holds what the APIs that take OAuth bearer tokens share
// about reading one (RFC 6750). It is a leaf package of plain string
// functions, so that a domain package (the assistant reads its tokens
// from gRPC metadata as well as from HTTP) and an HTTP transport (the
// banking API's) may both import it without either depending on the
// other or on the HTTP platform.
package bearer

import "strings"

// IsB64Token reports whether s matches RFC 6750 §2.1's b64token:
// 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=".
func IsB64Token(s string) bool {
	body := strings.TrimRight(s, "=")
	if body == "" {
		return false
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~+/", c) >= 0) {
			return false
		}
	}
	return true
}

// Parse reads an Authorization value (an HTTP header or gRPC metadata) as
// RFC 6750 §2.1 credentials: "Bearer" in any letter case (RFC 9110 §11.1
// makes schemes case-insensitive), one or more spaces, then a b64token,
// which is the token returned. With bare, a value that is a b64token by
// itself is taken as the token too, for the clients whose documents send
// the token without the scheme.
//
// Only SP and HTAB are trimmed around the value: they are the only white
// space RFC 9110 §5.6.3 allows around a field value. strings.TrimSpace
// would also drop Unicode spaces (U+00A0, U+0085, U+3000, …), so a token
// with one of them appended would authenticate as the token without it.
//
// When there is no token, malformed tells a request that tried the Bearer
// scheme and got it wrong (a token that is no b64token, the scheme with
// no token or with a tab after it, or with bare a single word that is no
// b64token) from one with no credentials or another scheme's. RFC 6750
// §3.1 answers the first with error="invalid_request" and asks that the
// second carry no error code, as the client may not know it must
// authenticate.
func Parse(authorization string, bare bool) (token string, malformed bool) {
	h := strings.Trim(authorization, " \t")
	if h == "" {
		return "", false
	}
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		if tok := strings.TrimLeft(h[7:], " \t"); IsB64Token(tok) {
			return tok, false
		}
		return "", true
	}
	// The scheme's name alone ("Bearer", or "Bearer " trimmed: a client
	// that put an empty token after it) is a b64token too, but not a
	// bare token: it is the Bearer scheme without its token, malformed
	// (invalid_request) as it is where bare tokens are not read, rather
	// than a token named "Bearer" refused as unknown (invalid_token),
	// which sent the client to renew a token it never sent.
	if bare && IsB64Token(h) && !strings.EqualFold(h, "bearer") {
		return h, false
	}
	scheme, _, spaced := strings.Cut(strings.ReplaceAll(h, "\t", " "), " ")
	switch {
	case strings.EqualFold(scheme, "bearer"):
		// "Bearer" alone, or followed by a tab: the Bearer scheme,
		// spelled wrong.
		return "", true
	case spaced || !bare:
		// Another scheme's credentials (Basic, Digest, …), or, where
		// the scheme is required, a value without it: not a bearer
		// request at all.
		return "", false
	}
	// A single word that is no b64token, where bare tokens are read.
	return "", true
}
