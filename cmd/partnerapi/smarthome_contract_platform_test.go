package main

import (
	"net/http"
	"regexp"
	"testing"

	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
)

// platformHomeCases are the answers the platform gives on the API's paths
// besides the operations' own: HEAD wherever GET is served, 405 for a
// method a path does not serve, and X-Request-Id, echoed or made.
func platformHomeCases() []homeCase {
	const (
		gate    = "/v1/mqtt-gate"
		feature = gate + "/categories/light/features"
	)
	return []homeCase{
		{name: "categories head", method: "HEAD", path: gate + "/categories", who: "agent", status: 200},
		{name: "categories head current", method: "HEAD", path: gate + "/categories", who: "agent", current: true, status: 304},
		{name: "categories head wrong password", method: "HEAD", path: gate + "/categories", who: "wrong", status: 401},
		{name: "categories head without credentials", method: "HEAD", path: gate + "/categories", status: 401, badRequest: true},
		{name: "features head", method: "HEAD", path: feature, who: "agent", status: 200},
		{name: "features head current", method: "HEAD", path: feature, who: "agent", current: true, status: 304},
		{name: "features head wrong password", method: "HEAD", path: feature, who: "wrong", status: 401},
		{name: "features head unknown category", method: "HEAD", path: gate + "/categories/toaster/features", who: "agent", status: 404},
		{name: "models head", method: "HEAD", path: gate + "/models", who: "agent", status: 200},
		{name: "models head current", method: "HEAD", path: gate + "/models?category=light", who: "agent", current: true, status: 304},
		{name: "models head wrong password", method: "HEAD", path: gate + "/models", who: "wrong", status: 401},
		{name: "models head of an unknown category", method: "HEAD", path: gate + "/models?category=toaster", who: "agent", status: 404},
		{name: "models head of an empty category", method: "HEAD", path: gate + "/models?category=", who: "agent", status: 400, serverOnly: emptyQueryUnread},

		{name: "categories post", method: "POST", path: gate + "/categories", who: "agent", status: 405, allow: "GET"},
		{name: "features delete", method: "DELETE", path: feature, status: 405, allow: "GET"},
		{name: "models put", method: "PUT", path: gate + "/models", who: "agent", body: `{}`, status: 405, allow: "GET"},
		{name: "validate get", method: "GET", path: gate + "/validate", who: "agent", status: 405, allow: "POST"},
		{name: "admin model patch", method: "PATCH", path: "/v1/admin/models/acme-s1", who: "admin", body: `{}`, status: 405, allow: "DELETE, GET, PUT"},
		{name: "admin agents get", method: "GET", path: "/v1/admin/agents", who: "admin", status: 405, allow: "POST"},
		{name: "health post", method: "POST", path: "/healthz", status: 405, allow: "GET"},

		{name: "categories without a request id", method: "GET", path: gate + "/categories", who: "agent", status: 200, requestID: "none"},
		{name: "categories with a request id of spaces", method: "GET", path: gate + "/categories", who: "agent", status: 200, requestID: "a b"},
		{name: "features unknown category without a request id", method: "GET", path: gate + "/categories/toaster/features", who: "agent", status: 404, requestID: "none"},
	}
}

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// checkRequestID holds an answer's X-Request-Id to what the contract's
// RequestId header says: the one sent when it was a valid id, else a fresh
// UUID.
func checkRequestID(t *testing.T, tc homeCase, sent string, resp *http.Response) {
	t.Helper()
	got := resp.Header.Values("X-Request-Id")
	if len(got) != 1 {
		t.Fatalf("X-Request-Id %q, want one", got)
	}
	if tc.requestID == "" {
		if got[0] != sent {
			t.Errorf("X-Request-Id %q, want the one sent, %q", got[0], sent)
		}
		return
	}
	if !uuidV4.MatchString(got[0]) {
		t.Errorf("X-Request-Id %q for %q sent, want a fresh version 4 UUID", got[0], tc.requestID)
	}
}

// checkMethodNotAllowed holds a 405 to the contract's MethodNotAllowed
// response, which no operation can declare since it answers methods that
// have none.
func checkMethodNotAllowed(t *testing.T, c *contractSpec, tc homeCase, resp *http.Response, raw []byte) {
	t.Helper()
	r := c.model.Model.Components.Responses.GetOrZero("MethodNotAllowed")
	if r == nil {
		t.Fatal("the contract has no MethodNotAllowed response")
	}
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("status %d, want 405: %.300s", resp.StatusCode, raw)
	}
	if got := resp.Header.Get("Allow"); got != tc.allow {
		t.Errorf("Allow %q, want %q", got, tc.allow)
	}
	for name, h := range r.Headers.FromOldest() {
		if h.Required && resp.Header.Get(name) == "" {
			t.Errorf("no %s, which MethodNotAllowed requires", name)
		}
	}
	mt := r.Content.GetOrZero("application/json")
	if mt == nil || mt.Schema == nil {
		t.Fatal("MethodNotAllowed has no JSON schema")
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	if ok, errs := c.schema.ValidateSchemaBytes(mt.Schema.Schema(), raw); !ok {
		t.Errorf("%s\nbreaks MethodNotAllowed:%s", raw, describe(errs))
	}
}

// TestSmarthomeContractDeclaresRequestID: every operation takes
// X-Request-Id and every answer the contract describes carries it, as the
// platform does on every answer (TestSmarthomeContract checks that it is
// echoed or made on each case).
func TestSmarthomeContractDeclaresRequestID(t *testing.T) {
	c := loadContract(t, "smarthome")
	for path, item := range c.model.Model.Paths.PathItems.FromOldest() {
		for method, op := range item.GetOperations().FromOldest() {
			name := method + " " + path
			takes := false
			for _, p := range append(append([]*v3.Parameter{}, item.Parameters...), op.Parameters...) {
				takes = takes || (p.In == "header" && p.Name == "X-Request-Id")
			}
			if !takes {
				t.Errorf("%s does not take X-Request-Id", name)
			}
			for code, r := range op.Responses.Codes.FromOldest() {
				if !declaresRequestID(r) {
					t.Errorf("%s %s does not declare X-Request-Id", name, code)
				}
			}
			if d := op.Responses.Default; d != nil && !declaresRequestID(d) {
				t.Errorf("%s default does not declare X-Request-Id", name)
			}
		}
	}
	for name, r := range c.model.Model.Components.Responses.FromOldest() {
		if !declaresRequestID(r) {
			t.Errorf("component response %s does not declare X-Request-Id", name)
		}
	}
}

func declaresRequestID(r *v3.Response) bool {
	return r.Headers != nil && r.Headers.GetOrZero("X-Request-Id") != nil
}
