package chatapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"partnerapi/internal/assistant"
	"partnerapi/internal/jsonmsg"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/web"
)

// errorBody is the assistant API's error envelope (reference §4).
type errorBody struct {
	Status  int    `json:"status"`
	Message string `json:"message"`
}

// tokenErrorBody is the token endpoint's envelope (reference §1).
type tokenErrorBody struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, message string) {
	writeJSON(w, status, errorBody{Status: status, Message: message})
}

// retryAfter is what a 429 tells clients to wait, in seconds.
const retryAfter = "1"

// The challenges of the assistant's 401s. The reference gives the
// bodies only (assistant.md §1, §2); the headers are what HTTP asks of any
// 401 (RFC 9110 §11.6.1: it carries WWW-Authenticate) in the schemes the
// endpoints take: Bearer for the API (RFC 6750 §3), Basic for the two
// token endpoints, whose clients authenticate with the Authorization
// header (RFC 6749 §5.2, RFC 7617). No client of the provider reads them
// (the npm client and the SDKs look at the status), and a browser, which
// would prompt for a Basic challenge, cannot call the API from a page
// (it serves no CORS).
const (
	bearerChallenge = `Bearer realm="assistant"`
	basicChallenge  = `Basic realm="assistant"`
)

// bearerRefused sets the challenge of a refused bearer token (RFC 6750
// §3.1): error="invalid_token" when the request sent one that is unknown
// or expired; error="invalid_request" when it tried the Bearer scheme with
// something that is no token (a space or a Unicode space in it, nothing
// after the scheme), so that the client learns its header is malformed
// rather than its token stale; bare when it sent no bearer credentials,
// which the RFC says should carry no error code. The body is the same
// 401 envelope in every case.
func bearerRefused(w http.ResponseWriter, r *http.Request, description string) {
	tok, malformed := assistant.ParseBearer(r.Header.Get("Authorization"))
	switch {
	case malformed:
		w.Header().Set("WWW-Authenticate", bearerChallenge+`, error="invalid_request", error_description="malformed bearer token"`)
	case tok == "":
		w.Header().Set("WWW-Authenticate", bearerChallenge)
	default:
		w.Header().Set("WWW-Authenticate", bearerChallenge+`, error="invalid_token", error_description="`+description+`"`)
	}
}

// tooMany sets the Retry-After of a token endpoint's 429: the failed-login
// throttle's wait, rounded up to whole seconds, or retryAfter for the
// token rate.
func tooMany(w http.ResponseWriter, err error) {
	var te *assistant.ThrottledError
	if errors.As(err, &te) {
		w.Header().Set("Retry-After", strconv.FormatInt(int64((te.RetryAfter+time.Second-1)/time.Second), 10))
		return
	}
	w.Header().Set("Retry-After", retryAfter)
}

// writeAuthError answers a token endpoint's refusal in its {code,
// message} envelope, with Retry-After on a 429 and the Basic challenge
// on a 401.
func writeAuthError(w http.ResponseWriter, ae *assistant.AuthError, err error) {
	switch ae.Status {
	case http.StatusTooManyRequests:
		tooMany(w, err)
	case http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", basicChallenge)
	}
	writeJSON(w, ae.Status, tokenErrorBody{Code: ae.Code, Message: ae.Message})
}

// retryAfterDatabase is what a 503 for an unavailable database tells
// clients to wait, in seconds: a restarting PostgreSQL is back within a
// few.
const retryAfterDatabase = "5"

// databaseUnavailable logs a request refused because the database cannot
// be used, at error level so that operators see the outage. The error's
// text names the database's user and name, never the URL's password.
func (s *server) databaseUnavailable(r *http.Request, err error) {
	if s.log != nil {
		s.log.ErrorContext(r.Context(), "assistant: database unavailable", "err", err, "request_id", web.RequestID(r.Context()))
	}
}

// domainError maps the assistant's errors to the envelope: the one place
// that does.
func (s *server) domainError(w http.ResponseWriter, r *http.Request, err error) {
	var inv *assistant.InvalidParams
	var ae *assistant.AuthError
	var te *assistant.TemplateError
	switch {
	case errors.As(err, &ae):
		writeAuthError(w, ae, err)
	case errors.Is(err, assistant.ErrAttachmentContext):
		// The provider's words name the URL the client called and stop
		// at /chat/completions (reference §4).
		writeError(w, http.StatusUnprocessableEntity, "Unprocessable Entity for url: "+requestURL(r))
	case errors.As(err, &inv):
		writeError(w, inv.Status, inv.Message)
	case errors.As(err, &te):
		// A conversation the model's chat template refuses is the
		// client's to fix: 422, which SDKs do not retry, unlike a 500.
		writeError(w, http.StatusUnprocessableEntity, "Invalid params: "+jsonmsg.Echo(te.Reason))
	case errors.Is(err, assistant.ErrUnauthorized):
		bearerRefused(w, r, "Unauthorized")
		writeError(w, http.StatusUnauthorized, "Unauthorized")
	case errors.Is(err, assistant.ErrTokenExpired):
		bearerRefused(w, r, "Token has expired")
		writeError(w, http.StatusUnauthorized, "Token has expired")
	case errors.Is(err, assistant.ErrPaymentRequired):
		writeError(w, http.StatusPaymentRequired, "Payment Required")
	case errors.Is(err, assistant.ErrPermissionDenied):
		writeError(w, http.StatusForbidden, "Permission denied")
	case errors.Is(err, assistant.ErrNoSuchModel):
		writeError(w, http.StatusNotFound, "No such model")
	case errors.Is(err, assistant.ErrNoSuchFile):
		writeError(w, http.StatusNotFound, "No such file")
	case errors.Is(err, assistant.ErrContextWindow):
		writeError(w, http.StatusRequestEntityTooLarge, "Payload too large")
	case errors.Is(err, assistant.ErrNoFunctions):
		writeError(w, http.StatusUnprocessableEntity, "Requested model does not support functions")
	case errors.Is(err, assistant.ErrNoAICheck):
		writeError(w, http.StatusUnprocessableEntity, "Requested model does not support ai check")
	case errors.Is(err, assistant.ErrNotEmbedder):
		writeError(w, http.StatusUnprocessableEntity, "Requested model does not support embeddings")
	case errors.Is(err, assistant.ErrUnavailable):
		// The model's server is down; clients retry a 503 (reference §4:
		// the Python SDK retries 5xx statuses it knows, 503 among them).
		w.Header().Set("Retry-After", retryAfter)
		writeError(w, http.StatusServiceUnavailable, "Service Unavailable")
	case errors.Is(err, assistant.ErrTooManyRequests), errors.Is(err, assistant.ErrEngineBusy):
		w.Header().Set("Retry-After", retryAfter)
		writeError(w, http.StatusTooManyRequests, "Too Many Requests")
	case assistant.FromStore(err) && sqldb.Unavailable(err):
		// The database is down, restarting or busy: the model's 503, which
		// clients retry, since the request succeeds once it is back (the
		// server recovers by itself). Unlike a model's server, nothing
		// else logs a database outage, so each refused request does. Only
		// the store's errors are asked: an upstream's stream cut short
		// breaks a connection in the same words and stays a 500.
		s.databaseUnavailable(r, err)
		w.Header().Set("Retry-After", retryAfterDatabase)
		writeError(w, http.StatusServiceUnavailable, "Service Unavailable")
	case web.ClientGone(r, err):
		// The client hung up before its answer was ready, so nothing
		// failed here and no one reads what is written. As an internal
		// error it was a 500 and an error line for every client that gave
		// up on a slow generation; the access log and /metrics count it
		// as nginx does, 499 "client closed request", as the gRPC side
		// answers it CANCELLED.
		w.WriteHeader(web.StatusClientClosedRequest)
	default:
		if s.log != nil {
			s.log.ErrorContext(r.Context(), "assistant: internal error", "err", err, "request_id", web.RequestID(r.Context()))
		}
		writeError(w, http.StatusInternalServerError, "Internal Server Error")
	}
}

// tokenError maps an error of the token endpoint to that endpoint's
// envelope, {code, message} (reference §1): its clients read code, and no
// answer of the endpoint may come in the API's {status, message}.
func (s *server) tokenError(w http.ResponseWriter, r *http.Request, err error) {
	var ae *assistant.AuthError
	if errors.As(err, &ae) {
		writeAuthError(w, ae, err)
		return
	}
	if assistant.FromStore(err) && sqldb.Unavailable(err) {
		s.databaseUnavailable(r, err)
		w.Header().Set("Retry-After", retryAfterDatabase)
		writeTokenError(w, http.StatusServiceUnavailable, "Service Unavailable")
		return
	}
	if s.log != nil {
		s.log.ErrorContext(r.Context(), "assistant: token endpoint: internal error", "err", err, "request_id", web.RequestID(r.Context()))
	}
	writeTokenError(w, http.StatusInternalServerError, "Internal Server Error")
}

// legacyTokenError maps an error of the legacy POST /api/v1/token to the
// API's {status, message}, not to the OAuth endpoint's {code, message}: the
// endpoint lives under {base_url} beside the other /api/v1 operations,
// whose conventions (reference §2) hold for every call there, and the
// clients send it through their API client, not their OAuth one, and read
// a failure as they read any other API error. Bad credentials of any kind
// (no Basic value, one that does not decode, an unknown client, a wrong
// secret) are the API's one 401 "Unauthorized", which tells a caller
// guessing passwords nothing about which client ids exist.
func (s *server) legacyTokenError(w http.ResponseWriter, r *http.Request, err error) {
	var ae *assistant.AuthError
	switch {
	case errors.Is(err, assistant.ErrTokenRate), errors.Is(err, assistant.ErrAuthThrottled):
		tooMany(w, err)
		writeError(w, http.StatusTooManyRequests, "Too Many Requests")
	case errors.As(err, &ae) && ae.Status == http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", basicChallenge)
		writeError(w, http.StatusUnauthorized, "Unauthorized")
	case errors.As(err, &ae):
		writeError(w, ae.Status, ae.Message)
	default:
		s.domainError(w, r, err)
	}
}

// writeTokenError answers a failure of the token endpoint the provider
// publishes no code for (an oversized body, a wrong method, an internal
// error) in its envelope. The code is the HTTP status, which none of the
// provider's codes (1–8) can be mistaken for.
func writeTokenError(w http.ResponseWriter, status int, message string) {
	writeJSON(w, status, tokenErrorBody{Code: status, Message: message})
}

// platformError maps the platform's errors to the assistant envelope, or
// to the token endpoint's for its path. The platform also calls it before
// the request reaches Handler (a declared body over the limit, a recovered
// panic, a request net/http refused before routing), so it sets
// X-Session-Id itself: every response carries one
// (reference §2).
func platformError(w http.ResponseWriter, r *http.Request, status int, err error) {
	setSessionID(w, r)
	message := "Internal Server Error"
	var mr *web.MalformedRequest
	switch {
	case errors.As(err, &mr):
		// Refused by net/http before routing (431, 400, 417, 501,
		// 505): its status, in net/http's own words.
		message = http.StatusText(status)
		if mr.Reason != "" {
			message += ": " + mr.Reason
		}
	case errors.Is(err, web.ErrNotFound):
		message = "Not Found"
	case errors.Is(err, web.ErrMethodNotAllowed):
		message = "Method Not Allowed"
	case errors.Is(err, web.ErrBodyTooLarge):
		message = "Payload too large"
	default:
		status = http.StatusInternalServerError
	}
	if r.URL.Path == oauthPath {
		writeTokenError(w, status, message)
		return
	}
	writeError(w, status, message)
}

// jsonErrorMessage words a body encoding/json refused for the 400 it is
// answered with, in JSON's terms rather than Go's (jsonmsg.Of).
func jsonErrorMessage(err error) string {
	return "invalid JSON body: " + jsonmsg.Of(err)
}

// requestURL is the absolute URL r was sent to, as its client named it:
// the scheme of the connection, the Host header and the path.
func requestURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + r.URL.EscapedPath()
}
