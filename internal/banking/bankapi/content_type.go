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
