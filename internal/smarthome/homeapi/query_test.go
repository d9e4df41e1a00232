package homeapi

import (
	"context"
	"strings"
	"testing"

	"partnerapi/internal/smarthome"
)

// ?category= is read as the client wrote it, on both routes that take it:
// the models listing's filter (reference §8.7's room for one) and the
// category a status is validated against. A value that is not properly
// percent-encoded is 400, and a semicolon is part of the name (so 404 for
// a category the catalog lacks), where r.URL.Query() used to drop such a
// pair unread: the listing then answered every model, and validation
// checked the status against the whole catalog and called it valid, as if
// no category had been asked for. Other parameters stay ignored, readable
// or not.
func TestCategoryQueryIsReadWhole(t *testing.T) {
	ctx := context.Background()
	svc := newTestService(t)
	pw, err := svc.CreateCredential(ctx, smarthome.KindAgent, "agent-1")
	if err != nil {
		t.Fatal(err)
	}
	srv := newTestServer(t, svc)
	do := func(method, path, body string) (int, string) {
		t.Helper()
		return basicDo(t, srv.URL, method, path, "agent-1", pw, body)
	}
	// on_off is no feature of a hub: checked against hub the status is
	// invalid, against the whole catalog it would pass.
	const status = `{"devices":{"d1":{"states":[{"key":"on_off","value":{"type":"BOOL","bool_value":true}}]}}}`
	const malformed = `{"code":400,"message":"Bad request","details":["category is not percent-encoded properly: invalid URL escape \"%ZZ\""]}`
	for _, tc := range []struct {
		name, method, path string
		status             int
		// says is in the body; lacks is not.
		says, lacks string
	}{
		{"models: one category", "GET", "/v1/mqtt-gate/models?category=hub", 200, `"id":"ID_root_hub"`, `"category":"light"`},
		{"models: an escaped name", "GET", "/v1/mqtt-gate/models?category=h%75b", 200, `"id":"ID_root_hub"`, `"category":"light"`},
		{"models: an escaped key", "GET", "/v1/mqtt-gate/models?categor%79=hub", 200, `"id":"ID_root_hub"`, `"category":"light"`},
		{"models: a malformed escape", "GET", "/v1/mqtt-gate/models?category=%ZZ", 400, malformed, `"models"`},
		{"models: a malformed escape beside a name", "GET", "/v1/mqtt-gate/models?category=hub&category=%ZZ", 400, malformed, `"models"`},
		{"models: a semicolon is no separator", "GET", "/v1/mqtt-gate/models?category=hub;light", 404,
			`{"code":404,"message":"Not found","details":["category 'hub;light' is not supported"]}`, `"models"`},
		{"models: unreadable other parameters ignored", "GET", "/v1/mqtt-gate/models?x=%ZZ&y=a;b&category=hub", 200, `"id":"ID_root_hub"`, `"category":"light"`},
		{"validate: the category", "POST", "/v1/mqtt-gate/validate?category=hub", 200, `"valid":false`, `"valid":true`},
		{"validate: an escaped category", "POST", "/v1/mqtt-gate/validate?category=h%75b", 200, `"valid":false`, `"valid":true`},
		{"validate: a malformed escape", "POST", "/v1/mqtt-gate/validate?category=%ZZ", 400, malformed, `"valid"`},
		{"validate: a semicolon is no separator", "POST", "/v1/mqtt-gate/validate?category=hub;x=1", 404,
			`{"code":404,"message":"Not found","details":["category 'hub;x=1' is not supported"]}`, `"valid"`},
		{"validate: unreadable other parameters ignored", "POST", "/v1/mqtt-gate/validate?x=%ZZ&category=hub", 200, `"valid":false`, `"valid":true`},
		{"validate: no category, the whole catalog", "POST", "/v1/mqtt-gate/validate?x=%ZZ", 200, `"valid":true`, `"valid":false`},
	} {
		code, body := do(tc.method, tc.path, status)
		if code != tc.status || !strings.Contains(body, tc.says) || strings.Contains(body, tc.lacks) {
			t.Errorf("%s: %s %s: %d %.300s, want %d with %s and without %s", tc.name, tc.method, tc.path, code, body, tc.status, tc.says, tc.lacks)
		}
	}
}
