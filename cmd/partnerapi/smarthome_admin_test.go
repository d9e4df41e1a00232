package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/smarthome"
)

// TestSmarthomeAdminAgents manages agents through the admin API and the
// CLI and checks that a changed or deleted credential stops working: at
// once when the server made the change, within the recheck bound when
// another process did.
func TestSmarthomeAdminAgents(t *testing.T) {
	ts := startServer(t, "--only", "smarthome")
	admin := provision(t, ts.dataDir, "admin", "root")
	admin.base = ts.urls["smarthome"]
	agentFrom := func(body []byte) homeClient {
		t.Helper()
		var cred struct{ Login, Password string }
		if err := json.Unmarshal(body, &cred); err != nil || cred.Login == "" || len(cred.Password) < 24 {
			t.Fatalf("credential %s: %v", body, err)
		}
		return homeClient{t: t, base: admin.base, user: cred.Login, pass: cred.Password}
	}
	status := func(c homeClient) int {
		resp, _ := c.do("GET", "/v1/mqtt-gate/categories", nil)
		return resp.StatusCode
	}

	resp, body := admin.do("POST", "/v1/admin/agents", []byte(`{"login":"ctl-1"}`))
	if resp.StatusCode != 201 || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("create: %d %s", resp.StatusCode, body)
	}
	agent := agentFrom(body)
	if s := status(agent); s != 200 {
		t.Fatalf("new agent: %d", s)
	}
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		detail                   string
	}{
		{"duplicate", "POST", "/v1/admin/agents", `{"login":"ctl-1"}`, 409, ""},
		{"bad login", "POST", "/v1/admin/agents", `{"login":"a b"}`, 400, "login must be"},
		{"bad body", "POST", "/v1/admin/agents", `{"name":"x"}`, 400, "body must be"},
		{"rotate unknown", "POST", "/v1/admin/agents/ghost/password", ``, 404, "agent 'ghost' does not exist"},
		{"delete unknown", "DELETE", "/v1/admin/agents/ghost", ``, 404, "agent 'ghost' does not exist"},
	} {
		resp, body := admin.do(tc.method, tc.path, []byte(tc.body))
		wantCommonError(t, resp, body, tc.status)
		if !strings.Contains(string(body), tc.detail) {
			t.Errorf("%s: %s lacks %q", tc.name, body, tc.detail)
		}
	}
	// Agents cannot manage agents.
	resp, body = agent.do("POST", "/v1/admin/agents", []byte(`{"login":"ctl-2"}`))
	wantCommonError(t, resp, body, 401)

	// Rotation through the server: the old password fails on the next request.
	resp, body = admin.do("POST", "/v1/admin/agents/ctl-1/password", nil)
	if resp.StatusCode != 200 {
		t.Fatalf("rotate: %d %s", resp.StatusCode, body)
	}
	rotated := agentFrom(body)
	if s := status(agent); s != 401 {
		t.Errorf("old password after rotation: %d", s)
	}
	if s := status(rotated); s != 200 {
		t.Errorf("new password: %d", s)
	}

	// Rotation by the CLI (another process): refused within the bound.
	var out bytes.Buffer
	err := runSmarthome(context.Background(), []string{"agent", "rotate", "--login", "ctl-1", "--data-dir", ts.dataDir},
		func(string) string { return "" }, stdio{in: strings.NewReader(""), out: &out, err: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	cliAgent := agentFrom(out.Bytes())
	deadline := time.Now().Add(smarthome.DefaultRecheck + time.Second)
	for status(rotated) != 401 {
		if time.Now().After(deadline) {
			t.Fatal("password rotated by the CLI still accepted")
		}
		time.Sleep(smarthome.DefaultRecheck / 2)
	}
	if s := status(cliAgent); s != 200 {
		t.Errorf("password from the CLI: %d", s)
	}

	// Deletion through the server.
	resp, _ = admin.do("DELETE", "/v1/admin/agents/ctl-1", nil)
	if resp.StatusCode != 204 {
		t.Fatalf("delete: %d", resp.StatusCode)
	}
	if s := status(cliAgent); s != 401 {
		t.Errorf("deleted agent: %d", s)
	}
	if strings.Contains(ts.logs.String(), cliAgent.pass) || strings.Contains(ts.logs.String(), rotated.pass) {
		t.Error("a password reached the logs")
	}

	// The admin list carries the version and every model.
	resp, body = admin.do("GET", "/v1/admin/models", nil)
	var list struct {
		Version int64             `json:"version"`
		Models  []smarthome.Model `json:"models"`
	}
	if err := json.Unmarshal(body, &list); err != nil || resp.StatusCode != 200 || list.Version != 1 || len(list.Models) < 4 {
		t.Fatalf("admin list: %d %s", resp.StatusCode, body)
	}
	if resp.Header.Get("X-Catalog-Version") != "1" {
		t.Errorf("X-Catalog-Version %q", resp.Header.Get("X-Catalog-Version"))
	}
}
