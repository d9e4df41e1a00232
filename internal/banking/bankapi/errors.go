package bankapi

import (
	"encoding/json"
	"errors"
	"net/http"

	"partnerapi/internal/web"
)

// errorBody is the banking API's error envelope (reference §13).
type errorBody struct {
	Cause       string   `json:"cause"`
	ReferenceID string   `json:"referenceId"`
	Message     string   `json:"message"`
	FieldNames  []string `json:"fieldNames,omitempty"`
	Checks      []string `json:"checks,omitempty"`
	Fields      []string `json:"fields,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers in the banking envelope with a fresh referenceId.
func writeError(w http.ResponseWriter, status int, cause, message string) {
	writeJSON(w, status, errorBody{Cause: cause, ReferenceID: web.NewUUID(), Message: message})
}

// platformError maps the platform's errors (unknown route, wrong method,
// oversized body, panic) to the banking envelope.
func platformError(w http.ResponseWriter, r *http.Request, status int, err error) {
	switch {
	case errors.Is(err, web.ErrNotFound), errors.Is(err, web.ErrMethodNotAllowed):
		writeError(w, status, "NOT_FOUND", "Ресурс не найден")
	case errors.Is(err, web.ErrBodyTooLarge):
		writeError(w, status, "VALIDATION_FAULT", "Тело запроса слишком велико")
	default:
		writeError(w, http.StatusInternalServerError, "UNKNOWN_EXCEPTION", "Внутренняя ошибка")
	}
}
