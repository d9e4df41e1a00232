package chatapi

import (
	"net/http"

	"partnerapi/internal/web"
)

// jsonBody lets a request through to next only when its body may be read
// as JSON: without a Content-Type (clients that set none mean JSON), or
// under application/json or a +json type. Another type (text/plain, a
// form) is a 400 in the API's envelope, the reference's answer to a bad
// request format (§2: POST bodies are application/json; §4), rather than a
// body parsed as JSON its sender did not declare and then billed.
func jsonBody(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !web.DeclaresJSON(r.Header) {
			writeError(w, http.StatusBadRequest, "Content-Type must be application/json")
			return
		}
		next(w, r)
	}
}
