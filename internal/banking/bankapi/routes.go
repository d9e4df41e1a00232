package bankapi

import "partnerapi/internal/web"

// addRoutes lists the banking API. Every route here is in api/banking.yaml.
// Each area registers its routes in its own function and file.
//
// Every business operation, each route under the API's prefix
// (/fintech/api), passes the services' one banking.Gate after
// authentication (auth.go, gated): the maintenance switch's 503 and the
// per-token, per-operation 429. The OAuth endpoints (/ic/sso, /ic/sbbid)
// do not: they are the bank's identity server's, not the API's
// (identity.go). /healthz, /metrics and /openapi.yaml are the platform's,
// not registered here, and stay open so that operators and the load
// balancer see a process in maintenance as up.
func (s *server) addRoutes(mux *web.Mux) {
	s.addIdentityRoutes(mux)    // identity.go: OAuth, client-info, crypto
	s.addPaymentRoutes(mux)     // payments.go
	s.addCardRoutes(mux)        // cards.go
	s.addWebhookRoutes(mux)     // webhook_settings.go
	s.addCertRequestRoutes(mux) // certreq.go
}
