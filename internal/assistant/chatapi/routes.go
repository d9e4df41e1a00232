package chatapi

import "partnerapi/internal/web"

// addRoutes lists the assistant API. Every route here is in api/assistant.yaml.
func addRoutes(mux *web.Mux, d Deps) {
}
