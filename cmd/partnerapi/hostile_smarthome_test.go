package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// smarthomeHostile is the smart home API under the sweep. It has no
// tenants: one catalog, which admins manage and agents read, so the
// "another tenant's id" class has nothing to name here and the role is
// what a credential may lack (an agent's on the admin API and the
// reverse, both 401 in the contract).
type smarthomeHostile struct {
	base         string
	agent, admin homeClient
	counter      atomic.Int64
}

const hostileModel = `{"manufacturer":"Acme","model":"S1","category":"socket","features":["online","on_off"]}`

func newSmarthomeHostile(t *testing.T) *hostileTarget {
	ts := startServer(t, "--only", "smarthome")
	s := &smarthomeHostile{base: ts.urls["smarthome"], agent: provision(t, ts.dataDir, "agent", "hostile-agent"),
		admin: provision(t, ts.dataDir, "admin", "hostile-admin")}
	// A deleted agent's credentials are well formed and refused.
	gone := provision(t, ts.dataDir, "agent", "gone-agent")
	if status, raw := s.call(t, "DELETE", "/v1/admin/agents/gone-agent", s.basic(s.admin), ""); status != http.StatusNoContent {
		t.Fatalf("delete agent: %d %s", status, raw)
	}
	return &hostileTarget{
		name: "smarthome", base: s.base, contract: loadContract(t, "smarthome"), maxBody: 1 << 20,
		good: s.good, envelope: smarthomeEnvelope, lenient: onlyMapKeys,
		foreign: func(*testing.T, hostileOp) (hostileReq, bool) { return hostileReq{}, false },
		badCreds: func(op hostileOp) map[string]string {
			who := s.roleOf(op)
			return map[string]string{
				"wrong password": "Basic " + base64.StdEncoding.EncodeToString([]byte(who.user+":not-the-password")),
				"not Base64":     "Basic %%%",
				"no colon":       "Basic " + base64.StdEncoding.EncodeToString([]byte(who.user)),
				"bearer":         "Bearer " + who.pass,
				"deleted agent":  s.basic(gone),
			}
		},
		unscoped: func(op hostileOp) (string, int) {
			if s.roleOf(op) == s.admin {
				return s.basic(s.agent), http.StatusUnauthorized
			}
			return s.basic(s.admin), http.StatusUnauthorized
		},
		badIDs: []string{"no%20such%20id", "..%2F..%2Fetc", "%27%20OR%201%3D1--", strings.Repeat("z", 300)},
	}
}

func (s *smarthomeHostile) basic(c homeClient) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(c.user+":"+c.pass))
}

// roleOf is the credential an operation takes: the admin API's, or an
// agent's.
func (s *smarthomeHostile) roleOf(op hostileOp) homeClient {
	if strings.HasPrefix(op.path, "/v1/admin/") {
		return s.admin
	}
	return s.agent
}

func (s *smarthomeHostile) call(t *testing.T, method, path, auth, body string) (int, []byte) {
	t.Helper()
	tg := &hostileTarget{base: s.base}
	return tg.send(t, method, hostileReq{path: path, auth: auth, body: body, ctype: "application/json"})
}

// putModel stores a model of a fresh id and returns the id.
func (s *smarthomeHostile) putModel(t *testing.T) string {
	t.Helper()
	id := fmt.Sprintf("hostile-model-%d", s.counter.Add(1))
	if status, raw := s.call(t, "PUT", "/v1/admin/models/"+id, s.basic(s.admin), hostileModel); status != http.StatusCreated {
		t.Fatalf("put model: %d %s", status, raw)
	}
	return id
}

// newAgent creates an agent through the admin API and returns its
// credentials.
func (s *smarthomeHostile) newAgent(t *testing.T) homeClient {
	t.Helper()
	login := fmt.Sprintf("hostile-%d", s.counter.Add(1))
	status, raw := s.call(t, "POST", "/v1/admin/agents", s.basic(s.admin), `{"login":"`+login+`"}`)
	var c struct{ Login, Password string }
	if status != http.StatusCreated || json.Unmarshal(raw, &c) != nil {
		t.Fatalf("create agent: %d %s", status, raw)
	}
	return homeClient{user: c.Login, pass: c.Password}
}

// refused reports whether an agent's credentials no longer open the API.
func (s *smarthomeHostile) refused(c homeClient) func(t *testing.T) bool {
	return func(t *testing.T) bool {
		status, _ := s.call(t, "GET", "/v1/mqtt-gate/categories", s.basic(c), "")
		return status == http.StatusUnauthorized
	}
}

func (s *smarthomeHostile) good(t *testing.T, op hostileOp) (hostileReq, bool) {
	r := hostileReq{path: op.path, auth: s.basic(s.roleOf(op)), ctype: "application/json"}
	exists := func(id string) func(t *testing.T) bool {
		return func(t *testing.T) bool {
			status, _ := s.call(t, "GET", "/v1/admin/models/"+id, s.basic(s.admin), "")
			return status == http.StatusOK
		}
	}
	switch op.key() {
	case "GET /v1/mqtt-gate/categories", "GET /v1/admin/models":
	case "GET /v1/mqtt-gate/models":
		// The listing's extension, filtered by two categories: every
		// class of the sweep spoils a request that uses it.
		r.path += "?category=light&category=socket"
	case "GET /v1/mqtt-gate/categories/{category}/features":
		r.path = "/v1/mqtt-gate/categories/light/features"
	case "POST /v1/mqtt-gate/validate":
		r.path += "?category=light"
		r.body = `{"devices":{"l1":{"states":[{"key":"on_off","value":{"type":"BOOL","bool_value":true}}]}}}`
	case "GET /v1/admin/models/{id}":
		r.path = "/v1/admin/models/" + s.putModel(t)
	case "PUT /v1/admin/models/{id}":
		id := fmt.Sprintf("hostile-model-%d", s.counter.Add(1))
		r.path, r.body, r.written = "/v1/admin/models/"+id, hostileModel, exists(id)
		// Model ids are the vendor's product ids, of no documented
		// syntax (reference §5): PUT creates whatever id it is given.
		r.anyID = true
	case "DELETE /v1/admin/models/{id}":
		id := s.putModel(t)
		r.path = "/v1/admin/models/" + id
		r.written = func(t *testing.T) bool { return !exists(id)(t) }
	case "POST /v1/admin/agents":
		login := fmt.Sprintf("hostile-new-%d", s.counter.Add(1))
		body := `{"login":"` + login + `"}`
		r.body = body
		r.written = func(t *testing.T) bool {
			status, _ := s.call(t, "POST", "/v1/admin/agents", s.basic(s.admin), body)
			if status == http.StatusCreated {
				// Created by the probe: delete it, so the probe leaves
				// the state it found.
				s.call(t, "DELETE", "/v1/admin/agents/"+login, s.basic(s.admin), "")
			}
			return status == http.StatusConflict
		}
	case "POST /v1/admin/agents/{login}/password", "DELETE /v1/admin/agents/{login}":
		c := s.newAgent(t)
		r.path = strings.Replace(op.path, "{login}", c.user, 1)
		r.written = s.refused(c)
	case "POST /v1/admin/agents/{login}/commands":
		// This server runs no MQTT gate: a sound command is 404, and a
		// broken one must still be refused as the client's fault.
		c := s.newAgent(t)
		r.path = strings.Replace(op.path, "{login}", c.user, 1)
		r.body = `{"devices":{"l1":{"states":[{"key":"on_off","value":{"type":"BOOL","bool_value":true}}]}}}`
		r.baseline = http.StatusNotFound
	case "POST /v1/admin/agents/{login}/rename_device_request", "POST /v1/admin/agents/{login}/change_group_device_request",
		"POST /v1/admin/agents/{login}/errors", "POST /v1/admin/agents/{login}/config_request":
		// The app's changes and error reports go through the gate too:
		// sound ones are 404 here, broken ones the client's fault.
		c := s.newAgent(t)
		r.path = strings.Replace(op.path, "{login}", c.user, 1)
		r.body = map[string]string{
			"rename_device_request":       `{"device_id":"l1","new_name":"Лампа"}`,
			"change_group_device_request": `{"device_id":"l1","home":"Дом","room":"Кухня"}`,
			"errors":                      `{"topic":"up/config","errors":["unknown feature"]}`,
			"config_request":              `{}`,
		}[op.path[strings.LastIndex(op.path, "/")+1:]]
		r.baseline = http.StatusNotFound
	default:
		return hostileReq{}, false
	}
	return r, true
}

// smarthomeEnvelope holds an error answer to the Common error (reference
// §3): code the HTTP status, a message, details never null.
func smarthomeEnvelope(t *testing.T, _ string, status int, raw []byte) {
	t.Helper()
	var e struct {
		Code    int       `json:"code"`
		Message string    `json:"message"`
		Details *[]string `json:"details"`
	}
	if err := strictJSON(raw, &e); err != nil || e.Code != status || e.Message == "" || e.Details == nil {
		t.Errorf("not the Common error for %d (%v): %.300s", status, err, raw)
	}
}
