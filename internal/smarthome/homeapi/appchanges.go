package homeapi

import (
	"net/http"

	"partnerapi/internal/smarthome"
)

// The app's changes to a device, the cloud's error reports and its request
// for an agent's config, sent to an agent through the MQTT gate: what the provider's cloud sends when a user
// renames a device or moves it to another room or home in the app, so that
// agents under development can be tested against them. The body is the
// down/ message itself, as for commands.

func (h *handlers) renameDevice(w http.ResponseWriter, r *http.Request) {
	h.appChange(w, r, smarthome.RenameKind, func(b []byte) error { _, err := smarthome.ParseRename(b); return err })
}

func (h *handlers) changeDeviceGroup(w http.ResponseWriter, r *http.Request) {
	h.appChange(w, r, smarthome.GroupKind, func(b []byte) error { _, err := smarthome.ParseGroup(b); return err })
}

func (h *handlers) reportErrors(w http.ResponseWriter, r *http.Request) {
	h.appChange(w, r, smarthome.ErrorsKind, func(b []byte) error { _, err := smarthome.ParseErrorReport(b); return err })
}

// requestConfig asks an agent for its whole config (down/config_request),
// so that an operator resynchronises the gate with it without restarting
// serve: the agent's answer replaces the devices the gate knows of it,
// dropping those taken off the controller (smarthome.Agent Config).
func (h *handlers) requestConfig(w http.ResponseWriter, r *http.Request) {
	h.appChange(w, r, smarthome.ConfigRequestKind, func(b []byte) error { _, err := smarthome.ParseConfigRequest(b); return err })
}

// appChange answers as the commands endpoint does: what is wrong with the
// request itself (a login no agent can have, a body that is not the
// message) is 400 whether or not the gate runs; a sound request then waits
// on the gate, 404 when serve runs none, 404 too for a device the agent's
// up/config messages did not announce, 503 with Retry-After while the broker is
// away (domainError), and 202 with the topic once the broker took it.
func (h *handlers) appChange(w http.ResponseWriter, r *http.Request, kind string, parse func([]byte) error) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	if !smarthome.ValidLogin(r.PathValue("login")) {
		h.domainError(w, r, &smarthome.InvalidError{Details: []string{"login must be 1-128 of A-Z a-z 0-9 . _ @ -"}})
		return
	}
	if err := parse(body); err != nil {
		h.domainError(w, r, err)
		return
	}
	if h.cmd == nil {
		h.domainError(w, r, smarthome.ErrGateOff)
		return
	}
	topic, err := h.cmd.Send(r.Context(), r.PathValue("login"), kind, body)
	if err != nil {
		h.domainError(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"topic": topic})
}
