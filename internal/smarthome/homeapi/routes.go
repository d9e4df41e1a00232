package homeapi

import (
	"net/http"

	"partnerapi/internal/smarthome"
	"partnerapi/internal/web"
)

// addRoutes lists the smart-home API. Every route here is in api/smarthome.yaml.
func addRoutes(mux *web.Mux, h *handlers) {
	agent := func(f http.HandlerFunc) http.HandlerFunc { return h.auth(smarthome.KindAgent, f) }
	admin := func(f http.HandlerFunc) http.HandlerFunc { return h.auth(smarthome.KindAdmin, f) }
	mux.HandleFunc("GET", "/v1/mqtt-gate/categories", agent(h.categories))
	mux.HandleFunc("GET", "/v1/mqtt-gate/categories/{category}/features", agent(h.features))
	mux.HandleFunc("GET", "/v1/mqtt-gate/models", agent(h.models))
	mux.HandleFunc("POST", "/v1/mqtt-gate/validate", agent(h.validate))
	mux.HandleFunc("GET", "/v1/admin/models", admin(h.listModels))
	mux.HandleFunc("GET", "/v1/admin/models/{id}", admin(h.getModel))
	mux.HandleFunc("PUT", "/v1/admin/models/{id}", admin(h.putModel))
	mux.HandleFunc("DELETE", "/v1/admin/models/{id}", admin(h.deleteModel))
	mux.HandleFunc("POST", "/v1/admin/agents", admin(h.createAgent))
	mux.HandleFunc("POST", "/v1/admin/agents/{login}/password", admin(h.rotateAgent))
	mux.HandleFunc("DELETE", "/v1/admin/agents/{login}", admin(h.deleteAgent))
	mux.HandleFunc("POST", "/v1/admin/agents/{login}/commands", admin(h.command))
	mux.HandleFunc("POST", "/v1/admin/agents/{login}/rename_device_request", admin(h.renameDevice))
	mux.HandleFunc("POST", "/v1/admin/agents/{login}/change_group_device_request", admin(h.changeDeviceGroup))
	mux.HandleFunc("POST", "/v1/admin/agents/{login}/errors", admin(h.reportErrors))
	mux.HandleFunc("POST", "/v1/admin/agents/{login}/config_request", admin(h.requestConfig))
}
