package homeapi

import (
	"net/http"
	"testing"
)

// The admin API words a login it already has as it words one it does not
// have: "agent 'x' already exists" beside "agent 'x' does not exist".
func TestAdminAgentMessagesAgree(t *testing.T) {
	svc := newTestService(t)
	adminPW, _ := rootAndDev(t, svc)
	srv := newTestServer(t, svc)
	for _, tc := range []struct {
		method, path, body string
		status             int
		want               string
	}{
		{"POST", "/v1/admin/agents", `{"login":"ag3"}`, http.StatusCreated, ""},
		{"POST", "/v1/admin/agents", `{"login":"ag3"}`, http.StatusConflict,
			`{"code":409,"message":"Conflict","details":["agent 'ag3' already exists"]}` + "\n"},
		{"DELETE", "/v1/admin/agents/ag3", "", http.StatusNoContent, ""},
		{"DELETE", "/v1/admin/agents/ag3", "", http.StatusNotFound,
			`{"code":404,"message":"Not found","details":["agent 'ag3' does not exist"]}` + "\n"},
	} {
		st, body := basicDo(t, srv.URL, tc.method, tc.path, "root", adminPW, tc.body)
		if st != tc.status || tc.want != "" && body != tc.want {
			t.Errorf("%s %s: %d %s, want %d %s", tc.method, tc.path, st, body, tc.status, tc.want)
		}
	}
}
