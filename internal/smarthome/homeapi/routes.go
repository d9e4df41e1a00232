package homeapi

import "partnerapi/internal/web"

// addRoutes lists the smart-home API. Every route here is in api/smarthome.yaml.
func addRoutes(mux *web.Mux, d Deps) {
}
