package homeapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"partnerapi/internal/jsonmsg"
	"strconv"
	"time"

	"partnerapi/internal/smarthome"
	"partnerapi/internal/sqldb"
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
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
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
	var mr *web.MalformedRequest
	switch {
	case errors.As(err, &mr):
		// Refused by net/http before routing (431, 400, 417, 501, 505), with
		// its reason, when it gives one, as the detail.
		var details []string
		if mr.Reason != "" {
			details = []string{mr.Reason}
		}
		writeError(w, status, http.StatusText(status), details...)
	case errors.Is(err, web.ErrNotFound):
		writeError(w, status, "Not found", "path '"+jsonmsg.Echo(r.URL.Path)+"' is not supported")
	case errors.Is(err, web.ErrMethodNotAllowed):
		writeError(w, status, "Method not allowed")
	case errors.Is(err, web.ErrBodyTooLarge):
		writeError(w, status, "Request body too large")
	default:
		writeError(w, http.StatusInternalServerError, "Internal server error")
	}
}

// retryAfter is what a 503 for an unavailable database tells clients to
// wait, in seconds: a restarting PostgreSQL is back within a few.
const retryAfter = "5"

// domainError maps a domain error to the Common error: the one place that
// decides statuses for the smart-home API.
func (h *handlers) domainError(w http.ResponseWriter, r *http.Request, err error) {
	var inv *smarthome.InvalidError
	var unknown *smarthome.UnknownCategoryError
	var device *smarthome.UnknownDeviceError
	switch {
	case errors.As(err, &inv):
		writeError(w, http.StatusBadRequest, "Bad request", inv.Details...)
	case errors.Is(err, smarthome.ErrUnauthorized):
		w.Header().Set("WWW-Authenticate", `Basic realm="partnerapi smarthome", charset="UTF-8"`)
		writeError(w, http.StatusUnauthorized, "Unauthorized")
	case errors.Is(err, smarthome.ErrDuplicate):
		writeError(w, http.StatusConflict, "Conflict", err.Error())
	case errors.As(err, &unknown):
		// The reference's wording (§3), for ?category= as for the path.
		writeError(w, http.StatusNotFound, "Not found", "category '"+jsonmsg.Echo(unknown.Category)+"' is not supported")
	case errors.As(err, &device):
		writeError(w, http.StatusNotFound, "Not found", device.Error()+" (agent '"+jsonmsg.Echo(r.PathValue("login"))+"')")
	case errors.Is(err, smarthome.ErrNotFound):
		writeError(w, http.StatusNotFound, "Not found", notFoundDetail(r, err))
	case errors.Is(err, smarthome.ErrGateOff):
		// serve runs no MQTT gate: commands are a feature this deployment
		// does not offer, for good. The reference's errors (§3) say 404
		// for a path the API does not serve and keep 503 for being
		// unavailable, which RFC 9110 §15.6.4 makes temporary and which
		// clients retry; 501 is in neither the reference's table nor the
		// provider's. So 404, whose details name the flag that turns the
		// gate on, and no Retry-After: sending it again cannot help.
		writeError(w, http.StatusNotFound, "Not found", err.Error())
	case errors.Is(err, smarthome.ErrGateDown):
		// The gate runs but its broker is away (or did not acknowledge):
		// the reference's 503, with a Retry-After as long as the gate's
		// longest wait between reconnection attempts, since the same
		// command succeeds once the broker is back.
		w.Header().Set("Retry-After", gateRetryAfter(err))
		writeError(w, http.StatusServiceUnavailable, "MQTT broker unreachable", err.Error())
	case errors.Is(err, context.Canceled):
		writeError(w, http.StatusServiceUnavailable, "Service unavailable")
	case sqldb.Unavailable(err):
		// The database is down, restarting or busy: the reference's 503,
		// with a Retry-After, since the request succeeds once it is back
		// and the server recovers by itself. Logged at error level so that
		// operators see the outage; the error's text names the database's
		// user and name, never the URL's password.
		h.log.ErrorContext(r.Context(), "smarthome: database unavailable", "err", err, "request_id", web.RequestID(r.Context()))
		w.Header().Set("Retry-After", retryAfter)
		writeError(w, http.StatusServiceUnavailable, "Service unavailable")
	default:
		h.log.ErrorContext(r.Context(), "smarthome: internal error", "err", err, "request_id", web.RequestID(r.Context()))
		writeError(w, http.StatusInternalServerError, "Internal server error")
	}
}

// gateRetryAfter is the Retry-After, in whole seconds rounded up, of an
// error wrapping smarthome.ErrGateDown: what the error says, else the MQTT
// gate's reconnection cap (homemqtt.MaxReconnectInterval).
func gateRetryAfter(err error) string {
	wait := 10 * time.Second
	var ra interface{ RetryAfter() time.Duration }
	if errors.As(err, &ra) && ra.RetryAfter() > 0 {
		wait = ra.RetryAfter()
	}
	return strconv.FormatInt(int64((wait+time.Second-1)/time.Second), 10)
}

func notFoundDetail(r *http.Request, err error) string {
	if id := r.PathValue("id"); id != "" {
		return "model '" + jsonmsg.Echo(id) + "' does not exist"
	}
	if login := r.PathValue("login"); login != "" {
		return "agent '" + jsonmsg.Echo(login) + "' does not exist"
	}
	return err.Error()
}
