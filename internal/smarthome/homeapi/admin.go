package homeapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"partnerapi/internal/jsonexact"
	"partnerapi/internal/jsonmsg"
	"partnerapi/internal/smarthome"
)

// The admin API: catalog models and agent credentials, behind admin
// credentials. Every change goes through the same Service the agents read
// from, so it is visible to the very next agent request.

// listModels and getModel show the models the store holds, those of a
// category the profile hides included: a profile is what agents are
// served, and an administrator must still see what DELETE removes.
func (h *handlers) listModels(w http.ResponseWriter, r *http.Request) {
	v, models, err := h.svc.StoredModels(r.Context())
	if err != nil {
		h.domainError(w, r, err)
		return
	}
	w.Header().Set("X-Catalog-Version", strconv.FormatInt(v, 10))
	writeJSON(w, http.StatusOK, map[string]any{"version": v, "models": models})
}

func (h *handlers) getModel(w http.ResponseWriter, r *http.Request) {
	v, models, err := h.svc.StoredModels(r.Context())
	if err != nil {
		h.domainError(w, r, err)
		return
	}
	for _, m := range models {
		if m.ID == r.PathValue("id") {
			w.Header().Set("X-Catalog-Version", strconv.FormatInt(v, 10))
			writeJSON(w, http.StatusOK, m)
			return
		}
	}
	h.domainError(w, r, smarthome.ErrNotFound)
}

// decodeOne decodes body, one JSON object, into v, refusing members v
// does not have and anything after the object: Decoder.Decode stops after
// the first value, so {"login":"a"}{"login":"b"} would create a alone. A
// member named as one of v's only in another case ("Login") is a member v
// does not have: encoding/json would take it for "login", and after both
// the last would win.
func decodeOne(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the object")
	}
	return inexactName(body, v)
}

// inexactName is encoding/json's own refusal of an unknown member for the
// first member of body whose name matches one of v's only in another case.
func inexactName(body []byte, v any) error {
	if name := jsonexact.Inexact(body, v); name != "" {
		return fmt.Errorf("json: unknown field %q", name)
	}
	return nil
}

func (h *handlers) putModel(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	var m smarthome.Model
	if err := decodeOne(body, &m); err != nil {
		h.domainError(w, r, &smarthome.InvalidError{Details: []string{"body is not a model: " + jsonmsg.Of(err)}})
		return
	}
	if err := checkModelParts(body); err != nil {
		h.domainError(w, r, &smarthome.InvalidError{Details: []string{"body is not a model: " + jsonmsg.Of(err)}})
		return
	}
	if m.ID == "" {
		m.ID = r.PathValue("id")
	}
	if m.ID != r.PathValue("id") {
		h.domainError(w, r, &smarthome.InvalidError{Details: []string{"id in the body differs from the path"}})
		return
	}
	created, v, err := h.svc.PutModel(r.Context(), m)
	if err != nil {
		h.domainError(w, r, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	w.Header().Set("X-Catalog-Version", strconv.FormatInt(v, 10))
	writeJSON(w, status, m)
}

func (h *handlers) deleteModel(w http.ResponseWriter, r *http.Request) {
	v, err := h.svc.DeleteModel(r.Context(), r.PathValue("id"))
	if err != nil {
		h.domainError(w, r, err)
		return
	}
	w.Header().Set("X-Catalog-Version", strconv.FormatInt(v, 10))
	w.WriteHeader(http.StatusNoContent)
}

// agentCredential is the one answer that carries a password: the moment it
// is issued.
type agentCredential struct {
	Login    string `json:"login"`
	Password string `json:"password"`
}

func (h *handlers) createAgent(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	var in struct {
		Login string `json:"login"`
	}
	if err := decodeOne(body, &in); err != nil {
		h.domainError(w, r, &smarthome.InvalidError{Details: []string{`body must be {"login": "..."}: ` + jsonmsg.Of(err)}})
		return
	}
	pw, err := h.svc.CreateCredential(r.Context(), smarthome.KindAgent, in.Login)
	if err != nil {
		h.domainError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, agentCredential{Login: in.Login, Password: pw})
}

func (h *handlers) rotateAgent(w http.ResponseWriter, r *http.Request) {
	login := r.PathValue("login")
	pw, err := h.svc.RotateCredential(r.Context(), smarthome.KindAgent, login)
	if err != nil {
		h.domainError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, agentCredential{Login: login, Password: pw})
}

func (h *handlers) deleteAgent(w http.ResponseWriter, r *http.Request) {
	if err := h.svc.DeleteCredential(r.Context(), smarthome.KindAgent, r.PathValue("login")); err != nil {
		h.domainError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// command sends a down/commands message to the agent named in the path
// through the MQTT gate, after checking it against the categories of the
// agent's config: what the provider's app does when a user switches
// a device, for agents under development.
func (h *handlers) command(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	// What is wrong with the request itself is the client's to fix, and
	// is said as such (400) whether or not the gate runs: a login no agent
	// can have, a body that is not a command. Only a sound command waits
	// on the gate: 404 when serve runs none, 503 with Retry-After while
	// its broker is away (domainError).
	if !smarthome.ValidLogin(r.PathValue("login")) {
		h.domainError(w, r, &smarthome.InvalidError{Details: []string{"login must be 1-128 of A-Z a-z 0-9 . _ @ -"}})
		return
	}
	var shape struct {
		Devices map[string]json.RawMessage `json:"devices"`
	}
	if err := json.Unmarshal(body, &shape); err != nil || shape.Devices == nil {
		h.domainError(w, r, &smarthome.InvalidError{Details: []string{`body must be a JSON object whose "devices" maps device ids to {states}`}})
		return
	}
	if h.cmd == nil {
		h.domainError(w, r, smarthome.ErrGateOff)
		return
	}
	topic, err := h.cmd.Command(r.Context(), r.PathValue("login"), body)
	if err != nil {
		h.domainError(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"topic": topic})
}
