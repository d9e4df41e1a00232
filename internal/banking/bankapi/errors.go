package bankapi

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/jsonmsg"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/web"
)

// errorBody is the banking API's error envelope (reference §13).
type errorBody struct {
	Cause       string   `json:"cause"`
	ReferenceID string   `json:"referenceId"`
	Message     string   `json:"message"`
	FieldNames  []string `json:"fieldNames,omitempty"`
	Checks      []string `json:"checks,omitempty"`
	// Fields is set for DESERIALIZATION_FAULT alone, and there always,
	// [] when no member is to blame: the reference's envelope carries it
	// in that cause (§13), while the other causes have no such member.
	Fields *[]string `json:"fields,omitempty"`
	// OAuthError and OAuthDescription are RFC 6749 §5.2's error and
	// error_description, set on the OAuth endpoints' outage and internal
	// errors alone (writeOAuthError).
	OAuthError       string `json:"error,omitempty"`
	OAuthDescription string `json:"error_description,omitempty"`
}

// envelope maps each domain error kind to its status and cause; this table
// is the one place where banking errors meet HTTP.
var envelope = map[banking.Kind]struct {
	status int
	cause  string
}{
	banking.KindInternal:        {http.StatusInternalServerError, "UNKNOWN_EXCEPTION"},
	banking.KindDeserialization: {http.StatusBadRequest, "DESERIALIZATION_FAULT"},
	banking.KindValidation:      {http.StatusBadRequest, "VALIDATION_FAULT"},
	banking.KindWorkflow:        {http.StatusBadRequest, "WORKFLOW_FAULT"},
	banking.KindSignCheck:       {http.StatusBadRequest, "SIGN_CHECK_EXCEPTION"},
	banking.KindUnauthorized:    {http.StatusUnauthorized, "UNAUTHORIZED"},
	banking.KindForbidden:       {http.StatusForbidden, "ACTION_ACCESS_EXCEPTION"},
	banking.KindDataNotFound:    {http.StatusNotFound, "DATA_NOT_FOUND_EXCEPTION"},
	banking.KindCardNotFound:    {http.StatusNotFound, "CARD_ID_NOT_FOUND"},
	banking.KindNotFound:        {http.StatusNotFound, "NOT_FOUND"},
	banking.KindJWSExpected:     {http.StatusUnsupportedMediaType, "JWS_EXCEPTED"},
	banking.KindTooManyRequests: {http.StatusTooManyRequests, "TOO_MANY_REQUESTS"},
	banking.KindUnavailable:     {http.StatusServiceUnavailable, "UNAVAILABLE_RESOURCE_EXCEPTION"},
}

// The two names the provider's documents give a card's 404 (reference §15
// #4): CARD_ID_NOT_FOUND, the default, or DATA_NOT_FOUND_EXCEPTION, the
// cause of every other missing document.
const (
	CauseCardNotFound = "CARD_ID_NOT_FOUND"
	CauseDataNotFound = "DATA_NOT_FOUND_EXCEPTION"
)

// ValidCardNotFoundCause reports whether c may be Deps.CardNotFoundCause.
func ValidCardNotFoundCause(c string) bool {
	return c == "" || c == CauseCardNotFound || c == CauseDataNotFound
}

// writeCardError is writeError for the card routes: a card not found is
// answered with the cause the deployment chose (Deps.CardNotFoundCause),
// the same 404 under the other name when it is DATA_NOT_FOUND_EXCEPTION.
func (s *server) writeCardError(w http.ResponseWriter, r *http.Request, err error) {
	var de *banking.Error
	if s.CardNotFoundCause == CauseDataNotFound && errors.As(err, &de) && de.Kind == banking.KindCardNotFound {
		moved := *de
		moved.Kind = banking.KindDataNotFound
		err = &moved
	}
	writeError(w, r, s.log, err)
}

// retryAfter is what a 503 for an unavailable database tells clients to
// wait, in seconds: a restarting PostgreSQL is back within a few, and a
// busy SQLite file sooner.
const retryAfter = "5"

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// referenceID is the referenceId of an error answer: the request id the
// platform made for the request, so the access log line of the request
// (request_id=…) is found by the referenceId a partner quotes; a fresh UUID
// when the client sent its own X-Request-Id, which it may reuse while every
// error has its own referenceId. own reports which.
func referenceID(r *http.Request) (ref string, own bool) {
	if id, made := web.OwnRequestID(r.Context()); made {
		return id, true
	}
	return web.NewUUID(), false
}

// writeError answers err in the banking envelope. Unexpected errors are
// logged with their referenceId and the request id, their text not sent;
// other errors of requests that brought their own X-Request-Id are logged
// at info level with both ids, since the access line carries only the
// request id.
//
// An error saying that the database cannot be used for now (down,
// restarting, out of connections, SQLite busy past its timeout:
// sqldb.Unavailable) is 503 UNAVAILABLE_RESOURCE_EXCEPTION, the maintenance
// switch's cause, with a Retry-After, because the partner's retry succeeds
// once the database is back, with no restart of ours. It is still logged
// at error level, saying so, so that operators see the outage; the error's
// text names the database's user and name, never the URL's password.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	writeErrorFor(w, r, log, err, false)
}

// writeErrorFor is writeError; with oauth, an outage or an internal error
// also carries RFC 6749 §5.2's members (oauthFailure).
func writeErrorFor(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error, oauth bool) {
	if web.ClientGone(r, err) {
		// The client hung up while its request ran (a store call was
		// cancelled with its context), so nothing failed here and no one
		// reads the answer. As an internal error it was a 500 and an
		// error line for every partner that gave up on a call; the access
		// log and /metrics count it as nginx does, 499, as the assistant
		// does.
		w.WriteHeader(web.StatusClientClosedRequest)
		return
	}
	var de *banking.Error
	dbDown := false
	if !errors.As(err, &de) {
		de = &banking.Error{Kind: banking.KindInternal, Message: "Внутренняя ошибка сервиса"}
		if sqldb.Unavailable(err) {
			de = &banking.Error{Kind: banking.KindUnavailable, Message: "Сервис временно недоступен, повторите запрос позже"}
			dbDown = true
		}
	}
	e := envelope[de.Kind]
	ref, own := referenceID(r)
	body := errorBody{Cause: e.cause, ReferenceID: ref, Message: de.Message,
		FieldNames: de.FieldNames, Checks: de.Checks}
	if de.Kind == banking.KindDeserialization {
		fields := de.Fields
		if fields == nil {
			fields = []string{}
		}
		body.Fields = &fields
	}
	if oauth {
		body.OAuthError, body.OAuthDescription = oauthFailure(de.Kind)
	}
	switch {
	case log == nil:
	case dbDown:
		log.Error("banking: database unavailable", "referenceId", ref, "request_id", web.RequestID(r.Context()), "err", err)
	case de.Kind == banking.KindInternal:
		log.Error("banking: unexpected error", "referenceId", ref, "request_id", web.RequestID(r.Context()), "err", err)
	case !own:
		log.Info("banking: error answered", "referenceId", ref, "request_id", web.RequestID(r.Context()), "cause", e.cause)
	}
	if de.Kind == banking.KindUnavailable {
		// The maintenance switch's 503 as well as the database's: a
		// client that honours Retry-After waits instead of retrying at
		// once.
		w.Header().Set("Retry-After", retryAfter)
	}
	if de.RetryAfter > 0 {
		// A rate limit's 429 names when its budget lets the next call
		// through, in whole seconds rounded up (RFC 9110 §10.2.3 has no
		// fractions), so that a client honouring it is not refused again.
		w.Header().Set("Retry-After", strconv.FormatInt(int64((de.RetryAfter+time.Second-1)/time.Second), 10))
	}
	writeJSON(w, e.status, body)
}

// basicChallenge is the WWW-Authenticate of an invalid_client 401. The
// reference gives only the body of the OAuth errors (§3, RFC 6749 style);
// the header is what RFC 6749 §5.2 asks of a client that authenticated
// with the Authorization header and what RFC 9110 §11.6.1 asks of any
// 401, in the one header scheme the client endpoints take (Basic, RFC
// 6749 §2.3.1, RFC 7617), also when the client sent its secret in the
// form or another scheme's credentials: it names what would be accepted.
// The authorization endpoint, which a browser opens, never answers 401
// (banking.CheckAuthorize), so no browser shows a password prompt for it.
const basicChallenge = `Basic realm="banking"`

// writeOAuthError answers the OAuth endpoints' errors in RFC 6749's form,
// {"error","error_description"}: 401 with the Basic challenge for
// invalid_client (RFC 6749 §5.2), 400 for the rest, invalid_request
// included (§5.2; the reference fixes no status for these errors, §3).
// Anything that is not an OAuthError (the database unavailable, an
// internal error) keeps its status, 503 with Retry-After or 500, and its
// banking envelope, with RFC 6749's members beside it (oauthFailure).
func (s *server) writeOAuthError(w http.ResponseWriter, r *http.Request, err error) {
	var oe *banking.OAuthError
	if !errors.As(err, &oe) {
		noStore(w)
		writeErrorFor(w, r, s.log, err, true)
		return
	}
	status := http.StatusBadRequest
	if oe.Code == "invalid_client" {
		status = http.StatusUnauthorized
		w.Header().Set("WWW-Authenticate", basicChallenge)
	}
	noStore(w)
	writeJSON(w, status, map[string]string{"error": oe.Code, "error_description": oe.Description})
}

// oauthFailure is the RFC 6749 error and error_description an OAuth
// endpoint adds to the envelope of an outage or an internal error. OAuth
// clients read "error" from a failed token request's JSON, whatever the
// status (golang.org/x/oauth2's RetrieveError.ErrorCode, oauthlib, which
// raises TemporarilyUnavailableError for this code, openid-client's
// OPError), and found none in the envelope alone: oauthlib reported a
// missing access_token, the others an error without a code. §5.2 defines
// no code for either case at the token endpoint; temporarily_unavailable
// and server_error are the ones §4.1.2.1 defines for the same conditions
// at the authorization endpoint, and a client must accept codes it does
// not know. The envelope's members stay, so that the provider's SDKs,
// which read cause and message when there is no error (the Java SDK's
// ErrorResponseDeserializer takes error, errorCode or cause), and partners
// quoting referenceId read what they read before. The description is
// ASCII, as §5.2 requires of error_description.
func oauthFailure(k banking.Kind) (code, description string) {
	switch k {
	case banking.KindUnavailable:
		return "temporarily_unavailable", "the service is temporarily unavailable; retry after Retry-After seconds"
	case banking.KindInternal:
		return "server_error", "internal error; quote referenceId to the bank"
	}
	return "", ""
}

// platformError maps the platform's errors (unknown route, wrong method,
// oversized body, a request net/http refused before routing, panic) to the
// banking envelope.
//
// A wrong method on a path the API serves is 405 with Allow (RFC 9110
// §15.5.6; the platform sets the header). The reference's error table
// (§13) has no cause for it, and partners' clients switch on the causes it
// lists, so it keeps NOT_FOUND, the cause of a path with no such
// operation, while its message says that the method is what is missing.
//
// Each answer's referenceId is found in log, as writeError's are: a
// recovered panic is logged as an unexpected error with its referenceId
// and request id, and an answer to a request that brought its own
// X-Request-Id, whose referenceId is then a fresh UUID the access line
// does not carry, is logged at info level with both ids. A nil log is
// slog.Default().
func platformError(w http.ResponseWriter, r *http.Request, log *slog.Logger, status int, err error) {
	if log == nil {
		log = slog.Default()
	}
	var mr *web.MalformedRequest
	switch {
	case errors.As(err, &mr):
		// A request net/http could not take as HTTP, refused before
		// routing with the status net/http chose (431, 400, 417, 501, 505):
		// like an oversized body, a request of the wrong form.
		msg := "Некорректный HTTP-запрос"
		if status == http.StatusRequestHeaderFieldsTooLarge {
			msg = "Заголовки запроса слишком велики"
		} else if mr.Reason != "" {
			msg += ": " + mr.Reason
		}
		writeJSON(w, status, errorBody{Cause: "VALIDATION_FAULT", ReferenceID: platformReferenceID(r, log, "VALIDATION_FAULT"), Message: msg})
	case errors.Is(err, web.ErrNotFound):
		writeJSON(w, status, errorBody{Cause: "NOT_FOUND", ReferenceID: platformReferenceID(r, log, "NOT_FOUND"), Message: "Ресурс не найден"})
	case errors.Is(err, web.ErrMethodNotAllowed):
		writeJSON(w, status, errorBody{Cause: "NOT_FOUND", ReferenceID: platformReferenceID(r, log, "NOT_FOUND"),
			Message: "Метод " + jsonmsg.Echo(r.Method) + " не поддерживается для этого ресурса"})
	case errors.Is(err, web.ErrBodyTooLarge):
		writeJSON(w, status, errorBody{Cause: "VALIDATION_FAULT", ReferenceID: platformReferenceID(r, log, "VALIDATION_FAULT"), Message: "Тело запроса слишком велико"})
	default:
		writeError(w, r, log, err)
	}
}

// platformReferenceID is the referenceId of a platform answer with cause,
// logged beside the request id when it is not that id (the client brought
// its own X-Request-Id), as writeError logs a handler's error.
func platformReferenceID(r *http.Request, log *slog.Logger, cause string) string {
	ref, own := referenceID(r)
	if !own {
		log.Info("banking: error answered", "referenceId", ref, "request_id", web.RequestID(r.Context()), "cause", cause)
	}
	return ref
}
