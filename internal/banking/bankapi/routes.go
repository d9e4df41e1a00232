package bankapi

import "partnerapi/internal/web"

// addRoutes lists the banking API. Every route here is in api/banking.yaml.
func addRoutes(mux *web.Mux, d Deps) {
}
