package bankapi

import (
	"mime"
	"net/http"
	"strings"

	"partnerapi/internal/banking"
)

// acceptsJSONBody reports whether r's Content-Type lets its body be read as
// JSON (reference §1: bodies are application/json, or application/jose
// where an operation takes JWS). A request without one is read as JSON, as
// clients that set none mean it; any other type (text/plain, a form) is
// refused rather than parsed as JSON the client did not declare.
func acceptsJSONBody(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	if ct == "" || ct == "application/json" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// errNotJSON is the answer to a body of another type: DESERIALIZATION_FAULT,
// the reference's cause for request data in a wrong format (§13).
func errNotJSON() error {
	return banking.Errorf(banking.KindDeserialization, "Тело запроса должно быть JSON (Content-Type: application/json)")
}

// prefersJSONClaims reports whether a user-info request's Accept (RFC 9110
// §12.5.1) values application/json above application/jwt, the provider's
// answer (reference §3). JWT's weight is that of the most specific range
// matching it (application/jwt, else application/*, else */*), so a client
// that names JSON only gets the bare claims, while the official Node SDK,
// whose axios sends "application/json, text/plain, */*" and then splits
// the body as a JWT, gets the JWT it reads. Equal weights go to the JWT.
func prefersJSONClaims(accept []string) bool {
	json, jwt := acceptWeights(accept, "application/json", "application/jwt")
	return json > 0 && json > jwt
}
