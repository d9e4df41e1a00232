// Package bankapi is the HTTP transport of the banking API: routes, the
// banking error envelope, auth and scope checks. Domain rules live in
// internal/banking.
package bankapi

import (
	"log/slog"
	"net/http"

	"partnerapi/internal/banking"
	"partnerapi/internal/web"
)

// Deps is what the banking transport needs. Each area of the API adds its
// services here.
type Deps struct {
	Metrics *web.Metrics
	Log     *slog.Logger
	Auth    banking.Authenticator
	// Identity serves OAuth, client-info and crypto (identity.go); nil:
	// those routes answer 503.
	Identity *banking.Identity
	Cards    *banking.Cards // business cards and limits (cards.go); nil: routes not served
	// Payments is the payment-document service (payments.go); nil: routes not served.
	Payments *banking.PaymentService
	// PaymentJWS opens the compact JWS bodies (Content-Type
	// application/jose, reference §9.6) of the POST operations under
	// /v1/payments; serve gives it the card area's verifier
	// (banking.Cards.JWS), so both check JWS alike. nil: those operations
	// take JSON only.
	PaymentJWS *banking.JWSVerifier
	// CertRequests is the certificate-request service (certreq.go); nil:
	// routes not served.
	CertRequests *banking.CertRequests
	// Webhooks is the partners' webhook settings and delivery log
	// (webhook_settings.go); nil: routes not served.
	Webhooks *banking.Webhooks
	// JWS is the bank's signing key: with it, answers under /fintech/api
	// to clients that accept application/jose are signed JWS (jose.go);
	// nil: always JSON.
	JWS *banking.BankKey
	// Prefix is the API prefix the deployment is configured with
	// (--banking-prefix; "" is DefaultPrefix), which links the API writes
	// for the client to follow start with (cards.go).
	Prefix string
	// CardNotFoundCause is the cause of a card's 404: CauseCardNotFound
	// ("" too) or CauseDataNotFound (errors.go; reference §15 #4).
	CardNotFoundCause string
}

// server carries the dependencies to the handlers.
type server struct {
	Deps
	log  *slog.Logger
	auth banking.Authenticator
}

// NewServer builds the banking API's router (a *web.Mux, so the platform
// and the contract tests see its routes) with the JWS answer rule.
func NewServer(d Deps) *Server {
	if d.Log == nil {
		d.Log = slog.Default()
	}
	s := &server{Deps: d, log: d.Log, auth: d.Auth}
	mux := web.NewMux("banking", s.platformError, d.Metrics)
	s.addRoutes(mux)
	return &Server{Mux: mux, jws: d.JWS, log: d.Log}
}

// platformError is the package's platformError logging to the server's
// log.
func (s *server) platformError(w http.ResponseWriter, r *http.Request, status int, err error) {
	platformError(w, r, s.log, status, err)
}

// ErrorWriter is the banking envelope for the platform, always JSON, its
// referenceIds logged to slog.Default(); (*Server).ErrorWriter signs it
// for clients that asked for JWS and logs to the server's log.
func ErrorWriter() web.ErrorWriter {
	return func(w http.ResponseWriter, r *http.Request, status int, err error) {
		platformError(w, r, nil, status, err)
	}
}
