package homeapi

import (
	"encoding/json"
	"errors"
	"net/http"

	"partnerapi/internal/web"
)

// errorBody is the smart-home Common error (reference §3): code is the HTTP
// status and details is never null.
type errorBody struct {
	Code    int      `json:"code"`
	Message string   `json:"message"`
	Details []string `json:"details"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, message string, details ...string) {
	if details == nil {
		details = []string{}
	}
	writeJSON(w, status, errorBody{Code: status, Message: message, Details: details})
}

// platformError maps the platform's errors to the Common error.
func platformError(w http.ResponseWriter, r *http.Request, status int, err error) {
	switch {
	case errors.Is(err, web.ErrNotFound):
		writeError(w, status, "Not found", "path '"+r.URL.Path+"' is not supported")
	case errors.Is(err, web.ErrMethodNotAllowed):
		writeError(w, status, "Method not allowed")
	case errors.Is(err, web.ErrBodyTooLarge):
		writeError(w, status, "Request body too large")
	default:
		writeError(w, http.StatusInternalServerError, "Internal server error")
	}
}
