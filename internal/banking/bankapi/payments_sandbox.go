package bankapi

import (
	"bytes"
	"net/http"

	"partnerapi/internal/banking"
	"partnerapi/internal/web"
)

// sandboxPayments is the path of the sandbox's stand-ins for the bank's own
// side of a payment document, next to sandbox/clock under the provider's
// prefix, so --banking-prefix serves it as it serves every other route.
const sandboxPayments = cardsBase + "/sandbox/payments"

// addSandboxPaymentRoutes registers the sandbox's payment operations. They
// go through the payment routes' gate (authentication, scope, maintenance,
// rate limit) like every operation on a document, so a CI run that floods
// them is held to the same budget as its creates and signs.
func (s *server) addSandboxPaymentRoutes(mux *web.Mux, gate func(op string, h principalHandler, scopes ...string) http.HandlerFunc) {
	mux.HandleFunc("POST", sandboxPayments+"/{externalId}/delete", gate("sandbox-delete", s.sandboxDeletePayment, banking.ScopePayDocRU))
	// An edit takes the scope of the document's kind, known once the
	// document is read (banking.KindScope): the gate lets in any payment
	// scope, as GET …/state's does.
	mux.HandleFunc("POST", sandboxPayments+"/{externalId}/edit", gate("sandbox-edit", s.sandboxEditPayment, anyPaymentScope...))
}

// sandboxDeleteBody is the optional body of a sandbox deletion.
type sandboxDeleteBody struct {
	// Comment becomes the document's and its webhook's bankComment; empty
	// leaves it null, as `partnerapi banking payment delete` does.
	Comment string `json:"comment"`
}

// sandboxDeletePayment is the bank user's deletion of a draft (reference §6,
// CREATED ─delete─> DELETED) over HTTP, for partners whose CI runs our
// server in a container and cannot reach its CLI. The contour is checked
// before the body is read, so outside the sandbox nothing about the request
// matters but that it is refused. The body may be empty: a deletion needs
// no comment, and a CI script should not have to invent one.
func (s *server) sandboxDeletePayment(w http.ResponseWriter, r *http.Request, p banking.Principal) {
	if err := s.Payments.SandboxOnly(); err != nil {
		s.writePaymentError(w, r, err)
		return
	}
	buf, err := readBody(r.Body)
	defer releaseBody(buf)
	if err != nil {
		s.writePaymentError(w, r, readError(err))
		return
	}
	var b sandboxDeleteBody
	// An empty body is JSON white space alone (RFC 8259 §2): bytes.TrimSpace
	// would also drop \v, \f and Unicode spaces, so a body of them was a
	// deletion without a comment and "\u00a0{...}" decoded as the object.
	if body := bytes.Trim(*buf, " \t\r\n"); len(body) > 0 {
		if !acceptsJSONBody(r) {
			s.writePaymentError(w, r, errNotJSON())
			return
		}
		if err := unmarshalBody(body, &b); err != nil {
			s.writePaymentError(w, r, err)
			return
		}
	}
	out, err := s.Payments.DeleteDraftInSandbox(r.Context(), p, r.PathValue("externalId"), b.Comment)
	if err != nil {
		s.writePaymentError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// sandboxEditPayment is the bank user's edit of a document that failed its
// checks (reference §6, CHECKERROR ─edit─> CREATED) over HTTP, for partners
// whose CI cannot reach the CLI's `banking payment edit`. The body is the
// corrected document as its create takes it, decoded as the create decodes
// it (a JWS too where the create takes one); the contour is checked before
// it is read, as the deletion's is.
func (s *server) sandboxEditPayment(w http.ResponseWriter, r *http.Request, p banking.Principal) {
	if err := s.Payments.SandboxOnly(); err != nil {
		s.writePaymentError(w, r, err)
		return
	}
	var d banking.Payment
	if err := s.decodePayment(r, &p, &d); err != nil {
		s.writePaymentError(w, r, err)
		return
	}
	out, err := s.Payments.EditDraftInSandbox(r.Context(), p, r.PathValue("externalId"), d)
	if err != nil {
		s.writePaymentError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}
