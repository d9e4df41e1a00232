package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestBankingRefreshReserveServe: serve's --banking-refresh-reserve is how
// long a used refresh token keeps working (reference §15 #7: 2 h,
// configurable); with 0 the token used once is refused at once, where the
// default would refresh it again.
func TestBankingRefreshReserveServe(t *testing.T) {
	ts := startServer(t, "--only", "banking", "--banking-refresh-reserve", "0s")
	app, used := newRefreshApp(t, ts, "Reserve")
	if st, m := app.refresh(used); st != 200 {
		t.Fatalf("refresh: %d %v", st, m)
	}
	if st, m := app.refresh(used); st != 400 || m["error"] != "invalid_grant" {
		t.Fatalf("the used token again: %d %v, want 400 invalid_grant", st, m)
	}
	// A negative reserve stops serve at start.
	m := &bankingModule{}
	m.refreshReserve = -1
	if _, err := m.build(t.Context(), deps{}); err == nil || !strings.Contains(err.Error(), "--banking-refresh-reserve") {
		t.Fatalf("build with a negative reserve: %v", err)
	}
}

// refreshApp is a partner app of a test server that refreshes tokens at
// its token endpoint.
type refreshApp struct {
	t                    *testing.T
	tokenURL, id, secret string
}

// newRefreshApp creates an app called name on ts and returns it with a
// refresh token of an openid grant to it (the CLI's).
func newRefreshApp(t *testing.T, ts *testServer, name string) (*refreshApp, string) {
	t.Helper()
	app := bankingCLI(t, "", "app", "create", "--name", name, "--redirect-uri", "https://partner.example/cb", "--data-dir", ts.dataDir)
	id, secret := app["client_id"].(string), app["client_secret"].(string)
	refresh := bankingCLI(t, "", "token", "--scope", "openid", "--client", id, "--data-dir", ts.dataDir)["refresh_token"].(string)
	return &refreshApp{t: t, tokenURL: ts.urls["banking"] + "/ic/sso/api/v2/oauth/token", id: id, secret: secret}, refresh
}

// refresh posts a refresh_token grant of token and returns the status and
// the decoded answer.
func (a *refreshApp) refresh(token string) (int, map[string]any) {
	a.t.Helper()
	resp, err := http.PostForm(a.tokenURL, url.Values{"grant_type": {"refresh_token"},
		"refresh_token": {token}, "client_id": {a.id}, "client_secret": {a.secret}})
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}
