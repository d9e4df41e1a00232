package banking

import (
	"errors"
	"fmt"
	"time"

	"partnerapi/internal/jsonmsg"
)

// Kind classifies a domain error; the transport maps each kind to the
// banking envelope's HTTP status and cause in one place (bankapi/errors.go).
type Kind int

const (
	KindInternal        Kind = iota // 500 UNKNOWN_EXCEPTION
	KindDeserialization             // 400 DESERIALIZATION_FAULT
	KindValidation                  // 400 VALIDATION_FAULT
	KindWorkflow                    // 400 WORKFLOW_FAULT
	KindSignCheck                   // 400 SIGN_CHECK_EXCEPTION
	KindUnauthorized                // 401 UNAUTHORIZED
	KindForbidden                   // 403 ACTION_ACCESS_EXCEPTION
	KindDataNotFound                // 404 DATA_NOT_FOUND_EXCEPTION
	KindCardNotFound                // 404 CARD_ID_NOT_FOUND
	KindNotFound                    // 404 NOT_FOUND
	KindJWSExpected                 // 415 JWS_EXCEPTED
	KindTooManyRequests             // 429 TOO_MANY_REQUESTS
	KindUnavailable                 // 503 UNAVAILABLE_RESOURCE_EXCEPTION
)

// Error is a banking domain error with what the envelope needs.
type Error struct {
	Kind       Kind
	Message    string
	FieldNames []string // VALIDATION_FAULT: offending fields
	Checks     []string // VALIDATION_FAULT: one failed check per field name
	Fields     []string // DESERIALIZATION_FAULT: fields that did not parse
	// RetryAfter is, for a 429, how long until the budget that refused the
	// call lets one through again; zero when the error says nothing of it.
	RetryAfter time.Duration
}

func (e *Error) Error() string { return fmt.Sprintf("banking error %d: %s", e.Kind, e.Message) }

// Errorf makes an Error of kind with a formatted message. Its string
// arguments are identifiers, most of them the client's own (an externalId, a
// certificate's kid, a login, an account), and are quoted through
// jsonmsg.Echo, so that a message never carries more than the first
// characters of one, nor bytes that are not UTF-8.
func Errorf(kind Kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, echoArgs(args)...)}
}

// echoArgs is args with each string quoted through jsonmsg.Echo, copied
// only when one changes.
func echoArgs(args []any) []any {
	out, copied := args, false
	for i, a := range args {
		s, ok := a.(string)
		if !ok {
			continue
		}
		if e := jsonmsg.Echo(s); e != s {
			if !copied {
				out, copied = append([]any(nil), args...), true
			}
			out[i] = e
		}
	}
	return out
}

// KindOf returns the kind of err, KindInternal for errors that are not
// domain errors.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindInternal
}
