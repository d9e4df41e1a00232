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
