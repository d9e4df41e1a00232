package main

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// outageHome is a smart home server on PostgreSQL whose database is taken
// down once its agent and admin are made; base is "" without PostgreSQL.
type outageHome struct {
	base         string
	agent, admin homeClient
}

// startOutageHome starts the down server behind a pgProxy, provisions an
// agent and an admin through the CLI while the proxy is up, then takes the
// proxy down: from then on every query of the server fails as on a stopped
// PostgreSQL, and no credential was ever verified, so none is cached.
func startOutageHome(t *testing.T) outageHome {
	t.Helper()
	dbURL, proxy, ok := outageDatabase(t, "homedown")
	if !ok {
		return outageHome{}
	}
	ts := startServer(t, "--only", "smarthome", "--database-url", dbURL)
	cred := func(kind, login string) homeClient {
		var out strings.Builder
		err := runSmarthome(context.Background(), []string{kind, "create", "--login", login, "--data-dir", ts.dataDir, "--database-url", dbURL},
			func(string) string { return "" }, stdio{in: strings.NewReader(""), out: &out, err: io.Discard})
		if err != nil {
			t.Fatal(err)
		}
		var c struct{ Login, Password string }
		if err := json.Unmarshal([]byte(out.String()), &c); err != nil || c.Password == "" {
			t.Fatalf("%s create printed %q: %v", kind, out.String(), err)
		}
		return homeClient{t: t, user: c.Login, pass: c.Password}
	}
	h := outageHome{base: ts.urls["smarthome"], agent: cred("agent", "agent-d"), admin: cred("admin", "root-d")}
	proxy.down()
	return h
}

// homeOutageCases has one row per operation of api/smarthome.yaml that
// reads the store, sent to the down server: each is 503 with a
// Retry-After, in the reference's Common error; and /healthz, whose probe
// says unavailable.
func homeOutageCases(model, config, command string) []homeCase {
	const gate, models, agents = "/v1/mqtt-gate", "/v1/admin/models", "/v1/admin/agents"
	rows := []homeCase{
		{name: "health", method: "GET", path: "/healthz"},
		{name: "categories", method: "GET", path: gate + "/categories", who: "agent"},
		{name: "features", method: "GET", path: gate + "/categories/light/features", who: "agent"},
		{name: "models", method: "GET", path: gate + "/models", who: "agent"},
		{name: "validate", method: "POST", path: gate + "/validate", who: "agent", body: config},
		{name: "admin models", method: "GET", path: models, who: "admin"},
		{name: "admin model", method: "GET", path: models + "/acme-s1", who: "admin"},
		{name: "admin put", method: "PUT", path: models + "/acme-s1", who: "admin", body: model},
		{name: "admin delete model", method: "DELETE", path: models + "/acme-s1", who: "admin"},
		{name: "admin create agent", method: "POST", path: agents, who: "admin", body: `{"login":"ctl-d"}`},
		{name: "admin rotate", method: "POST", path: agents + "/agent-d/password", who: "admin"},
		{name: "admin delete agent", method: "DELETE", path: agents + "/agent-d", who: "admin"},
		{name: "command", method: "POST", path: agents + "/agent-d/commands", who: "admin", body: command},
		{name: "rename", method: "POST", path: agents + "/agent-d/rename_device_request", who: "admin", body: `{"device_id":"l1","new_name":"Desk lamp"}`},
		{name: "change group", method: "POST", path: agents + "/agent-d/change_group_device_request", who: "admin", body: `{"device_id":"l1","home":"Home","room":"Study"}`},
		{name: "errors", method: "POST", path: agents + "/agent-d/errors", who: "admin", body: `{"topic":"up/config","errors":["x"]}`},
	}
	for i := range rows {
		rows[i].name = "database down " + rows[i].name
		rows[i].down, rows[i].status = true, 503
	}
	return rows
}
