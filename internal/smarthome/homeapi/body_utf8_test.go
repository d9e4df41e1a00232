package homeapi

import (
	"strings"
	"testing"
)

// A body that is not UTF-8 is refused with the API's 400 wherever one is
// read: an agent's validation, an administrator's model and agent, where
// encoding/json would have taken the bad byte as U+FFFD and validated or
// stored a name nobody sent.
func TestBodiesNotUTF8AreRefused(t *testing.T) {
	svc := newTestService(t)
	adminPW, agentPW := rootAndDev(t, svc)
	srv := newTestServer(t, svc)
	for _, tc := range []struct {
		name, method, path, login, pw, body string
	}{
		{"validate", "POST", "/v1/mqtt-gate/validate", "dev", agentPW, `{"devices":{"d` + "\xff" + `1":{"features":[]}}}`},
		{"model", "PUT", "/v1/admin/models/mm2", "root", adminPW,
			`{"manufacturer":"a` + "\xff" + `","model":"X","category":"light","features":["online","on_off"]}`},
		{"agent", "POST", "/v1/admin/agents", "root", adminPW, `{"login":"agent` + "\xff" + `"}`},
	} {
		status, body := basicDo(t, srv.URL, tc.method, tc.path, tc.login, tc.pw, tc.body)
		if status != 400 || !strings.Contains(body, "the body is not UTF-8") {
			t.Errorf("%s: %d %s, want 400 saying the body is not UTF-8", tc.name, status, body)
		}
	}
	// The model was not stored.
	if status, body := basicDo(t, srv.URL, "GET", "/v1/mqtt-gate/models?category=light", "dev", agentPW, ""); status != 200 || strings.Contains(body, "mm2") {
		t.Errorf("models %d %s", status, body)
	}
}
