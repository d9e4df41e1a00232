package bankapi

import (
	"mime"
	"net/http"
	"unicode/utf8"

	"partnerapi/internal/banking"
	"partnerapi/internal/web"
)

// acceptsJSONBody reports whether r's Content-Type lets its body be read as
// JSON (reference §1: bodies are application/json, or application/jose
// where an operation takes JWS), by the rule the assistant API shares
// (web.DeclaresJSON): a request without one is read as JSON, as clients
// that set none mean it; any other type (text/plain, a form) is refused
// rather than parsed as JSON the client did not declare.
func acceptsJSONBody(r *http.Request) bool {
	return web.DeclaresJSON(r.Header)
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

// takesJose reports whether r's body is a compact JWS this server opens:
// its Content-Type is application/jose (reference §1, §9.6) and the
// payment operations have a JWS verifier (Deps.PaymentJWS). Without one
// such a body stays DESERIALIZATION_FAULT, as any other non-JSON type.
func (s *server) takesJose(r *http.Request) bool {
	if s.PaymentJWS == nil {
		return false
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == joseContentType
}

// openJose checks body, a compact JWS, for the principal who with the
// card-limit operation's check (banking.JWSVerifier: the kid's certificate
// must be active and who's organisation's, the signature must verify) and
// returns its payload, the JSON document the body stands for.
func (s *server) openJose(r *http.Request, who *banking.Principal, body []byte) ([]byte, error) {
	payload, err := s.PaymentJWS.Open(r.Context(), *who, body)
	if err != nil {
		return nil, err
	}
	return payload, utf8Body(payload)
}

// utf8Body refuses a body, or a JWS's payload, that is not UTF-8 (RFC 8259
// §8.1) as DESERIALIZATION_FAULT, as the provider's JSON parser does:
// encoding/json would take each bad byte as U+FFFD, and the document would
// be stored, and its digest signed, with text the partner never sent.
func utf8Body(body []byte) error {
	if utf8.Valid(body) {
		return nil
	}
	return banking.Errorf(banking.KindDeserialization, "Тело запроса не в кодировке UTF-8")
}
