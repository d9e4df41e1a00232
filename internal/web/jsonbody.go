package web

import (
	"mime"
	"net/http"
	"strings"
)

// DeclaresJSON reports whether a request with header h may have its body
// read as JSON: it has no Content-Type (clients that set none mean JSON),
// or its media type, compared without letter case and without parameters
// (RFC 9110 §8.3.1), is application/json or carries RFC 6839's +json
// suffix. Any other type (text/plain, a form) is for the caller to refuse
// in its API's envelope rather than parse a body as JSON its sender did
// not declare. The banking and assistant APIs both check bodies this way,
// so the rule is one function.
func DeclaresJSON(h http.Header) bool {
	ct := h.Get("Content-Type")
	if ct == "" || ct == "application/json" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}
