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
	app := bankingCLI(t, "", "app", "create", "--name", "Reserve", "--redirect-uri", "https://partner.example/cb", "--data-dir", ts.dataDir)
	id, secret := app["client_id"].(string), app["client_secret"].(string)
	used := bankingCLI(t, "", "token", "--scope", "openid", "--client", id, "--data-dir", ts.dataDir)["refresh_token"].(string)
	refresh := func() (int, map[string]any) {
		resp, err := http.PostForm(ts.urls["banking"]+"/ic/sso/api/v2/oauth/token", url.Values{"grant_type": {"refresh_token"},
			"refresh_token": {used}, "client_id": {id}, "client_secret": {secret}})
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}
	if st, m := refresh(); st != 200 {
		t.Fatalf("refresh: %d %v", st, m)
	}
	if st, m := refresh(); st != 400 || m["error"] != "invalid_grant" {
		t.Fatalf("the used token again: %d %v, want 400 invalid_grant", st, m)
	}
	// A negative reserve stops serve at start.
	m := &bankingModule{}
	m.refreshReserve = -1
	if _, err := m.build(t.Context(), deps{}); err == nil || !strings.Contains(err.Error(), "--banking-refresh-reserve") {
		t.Fatalf("build with a negative reserve: %v", err)
	}
}
