package bankapi

import "partnerapi/internal/web"

// addRoutes lists the banking API. Every route here is in api/banking.yaml.
// Each area registers its routes in its own function and file.
func (s *server) addRoutes(mux *web.Mux) {
	s.addIdentityRoutes(mux)    // identity.go: OAuth, client-info, crypto
	s.addPaymentRoutes(mux)     // payments.go
	s.addCardRoutes(mux)        // cards.go
	s.addWebhookRoutes(mux)     // webhook_settings.go
	s.addCertRequestRoutes(mux) // certreq.go
}
