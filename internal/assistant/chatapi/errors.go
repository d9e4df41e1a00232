package chatapi

import (
	"encoding/json"
	"errors"
	"net/http"

	"partnerapi/internal/web"
)

// errorBody is the assistant API's error envelope (reference §4).
type errorBody struct {
	Status  int    `json:"status"`
	Message string `json:"message"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, message string) {
	writeJSON(w, status, errorBody{Status: status, Message: message})
}

// platformError maps the platform's errors to the assistant envelope.
func platformError(w http.ResponseWriter, r *http.Request, status int, err error) {
	switch {
	case errors.Is(err, web.ErrNotFound):
		writeError(w, status, "Not Found")
	case errors.Is(err, web.ErrMethodNotAllowed):
		writeError(w, status, "Method Not Allowed")
	case errors.Is(err, web.ErrBodyTooLarge):
		writeError(w, status, "Payload too large")
	default:
		writeError(w, http.StatusInternalServerError, "Internal Server Error")
	}
}
