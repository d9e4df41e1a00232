package bankapi

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/banking"
)

const changeSecretPath = "/ic/sso/api/v1/change-client-secret"

// TestChangeClientSecret is change-client-secret (reference §3): the app
// proves itself with its secret and one of its access tokens, the new
// secret replaces the old at once, is stored hashed and lives 40 days, and
// an expired secret is refused at the token endpoint as invalid_client.
func TestChangeClientSecret(t *testing.T) {
	e := newIDEnv(t)
	e.addApp(t)
	ctx := context.Background()
	own, err := e.id.IssueTokens(ctx, oaClient, banking.SandboxOrgID, banking.SandboxUserID, []string{banking.ScopeOpenID})
	if err != nil {
		t.Fatal(err)
	}
	other := e.token(t, banking.ScopeOpenID) // the sandbox app's
	newSecret := strings.Repeat("aB3_-", 8)
	form := func(set map[string]string) url.Values {
		v := url.Values{"access_token": {own.AccessToken}, "client_id": {oaClient}, "client_secret": {oaSecret},
			"new_client_secret": {newSecret}}
		for k, val := range set {
			v.Set(k, val)
		}
		return v
	}
	for _, c := range []struct {
		name   string
		set    map[string]string
		status int
		code   string
	}{
		{"no new secret", map[string]string{"new_client_secret": ""}, 400, "invalid_request"},
		{"no access token", map[string]string{"access_token": ""}, 400, "invalid_request"},
		{"wrong secret", map[string]string{"client_secret": "wrong"}, 401, "invalid_client"},
		{"unknown client", map[string]string{"client_id": "nope"}, 401, "invalid_client"},
		{"unknown access token", map[string]string{"access_token": "00000000-0000-4000-8000-000000000000-1"}, 400, "invalid_grant"},
		{"another app's access token", map[string]string{"access_token": other.AccessToken}, 400, "invalid_grant"},
		{"refresh token as access token", map[string]string{"access_token": own.RefreshToken}, 400, "invalid_grant"},
		{"39 characters", map[string]string{"new_client_secret": newSecret[:39]}, 400, "invalid_request"},
		{"41 characters", map[string]string{"new_client_secret": newSecret + "a"}, 400, "invalid_request"},
		{"character outside the alphabet", map[string]string{"new_client_secret": newSecret[:39] + "!"}, 400, "invalid_request"},
		{"the current secret", map[string]string{"new_client_secret": oaSecret}, 400, "invalid_request"},
	} {
		st, m := e.tokenCall(t, changeSecretPath, form(c.set))
		if st != c.status || m["error"] != c.code || m["error_description"] == "" {
			t.Fatalf("%s: %d %v, want %d %s", c.name, st, m, c.status, c.code)
		}
	}
	if app, _ := e.id.Store.GetApp(ctx, oaClient); app.SecretHash != banking.HashSecret(oaSecret) {
		t.Fatal("a refused change changed the secret")
	}

	changedAt := e.now
	st, m := e.tokenCall(t, changeSecretPath, form(nil))
	if st != 200 || m["clientSecretExpiration"] != float64(40) || len(m) != 1 {
		t.Fatalf("change: %d %v", st, m)
	}
	app, err := e.id.Store.GetApp(ctx, oaClient)
	if err != nil || app.SecretHash != banking.HashSecret(newSecret) || !app.SecretExpiresAt.Equal(changedAt.Add(40*24*time.Hour)) {
		t.Fatalf("stored app %+v %v", app, err)
	}
	// The old secret stops at once, for the token endpoint and for a
	// second change made with it.
	refresh := func(secret string) (int, map[string]any) {
		f := refreshForm(own.RefreshToken)
		f.Set("client_secret", secret)
		return e.tokenCall(t, "/ic/sso/api/v2/oauth/token", f)
	}
	if st, m := refresh(oaSecret); st != 401 || m["error"] != "invalid_client" {
		t.Fatalf("old secret: %d %v", st, m)
	}
	if st, m := e.tokenCall(t, changeSecretPath, form(map[string]string{"new_client_secret": strings.Repeat("z", 40)})); st != 401 || m["error"] != "invalid_client" {
		t.Fatalf("change with the old secret: %d %v", st, m)
	}
	st, m = refresh(newSecret)
	if st != 200 {
		t.Fatalf("new secret: %d %v", st, m)
	}
	own.RefreshToken = m["refresh_token"].(string)

	// A production client sends the parameters in the query string with an
	// empty JSON body (open-condo-software/condo).
	third := strings.Repeat("Q", 40)
	q := url.Values{"access_token": {m["access_token"].(string)}, "client_id": {oaClient}, "client_secret": {newSecret},
		"new_client_secret": {third}}
	req, _ := http.NewRequest("POST", e.srv.URL+changeSecretPath+"?"+q.Encode(), nil)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("query-string change: %d", resp.StatusCode)
	}

	// On its 40th day the secret still works; from then on the token
	// endpoint refuses it as invalid_client, and so does a change with it.
	e.now = e.now.Add(40*24*time.Hour - time.Minute)
	st, m = refresh(third)
	if st != 200 {
		t.Fatalf("secret before expiry: %d %v", st, m)
	}
	own.RefreshToken = m["refresh_token"].(string)
	e.now = e.now.Add(time.Minute)
	if st, m := refresh(third); st != 401 || m["error"] != "invalid_client" || !strings.Contains(m["error_description"].(string), "expired") {
		t.Fatalf("expired secret: %d %v", st, m)
	}
	access, err := e.id.IssueTokens(ctx, oaClient, banking.SandboxOrgID, banking.SandboxUserID, []string{banking.ScopeOpenID})
	if err != nil {
		t.Fatal(err)
	}
	if st, m := e.tokenCall(t, changeSecretPath, url.Values{"access_token": {access.AccessToken}, "client_id": {oaClient},
		"client_secret": {third}, "new_client_secret": {newSecret}}); st != 401 || m["error"] != "invalid_client" {
		t.Fatalf("change with an expired secret: %d %v", st, m)
	}
}

// TestChangeClientSecretNeverExpires: with secrets configured never to
// expire the new secret has no expiry, and the answer is a hundred years
// rather than 0, which clients take for a failed change.
func TestChangeClientSecretNeverExpires(t *testing.T) {
	e := newIDEnv(t)
	e.addApp(t)
	e.id.ClientSecretTTL = 0
	tok, err := e.id.IssueTokens(context.Background(), oaClient, banking.SandboxOrgID, banking.SandboxUserID, []string{banking.ScopeOpenID})
	if err != nil {
		t.Fatal(err)
	}
	next := strings.Repeat("n", 40)
	st, m := e.tokenCall(t, changeSecretPath, url.Values{"access_token": {tok.AccessToken}, "client_id": {oaClient},
		"client_secret": {oaSecret}, "new_client_secret": {next}})
	if st != 200 || m["clientSecretExpiration"] != float64(36500) {
		t.Fatalf("change: %d %v", st, m)
	}
	if app, _ := e.id.Store.GetApp(context.Background(), oaClient); !app.SecretExpiresAt.IsZero() {
		t.Fatalf("expires at %v", app.SecretExpiresAt)
	}
	e.now = e.now.Add(1000 * 24 * time.Hour)
	f := refreshForm(tok.RefreshToken)
	f.Set("client_secret", next)
	if st, m := e.tokenCall(t, "/ic/sso/api/v2/oauth/token", f); st != 400 || m["error"] != "invalid_grant" {
		// The refresh token has expired by now; the secret itself passed.
		t.Fatalf("secret after 1000 days: %d %v", st, m)
	}
}
