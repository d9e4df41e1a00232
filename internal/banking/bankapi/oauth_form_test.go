package bankapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"partnerapi/internal/banking"
)

// TestOAuthFormBody holds the form-posting endpoints under /ic/sso to RFC
// 6749: their parameters are an application/x-www-form-urlencoded body
// (§3.2, §4.1.3), so a body of any other type is a malformed request,
// 400 invalid_request (§5.2), even when it carries the right credentials,
// rather than a failed client authentication. A wrong secret in a proper
// form stays 401 invalid_client, and change-client-secret keeps taking its
// parameters from the query string with an empty JSON body, as
// open-condo-software/condo sends them.
func TestOAuthFormBody(t *testing.T) {
	e := newIDEnv(t)
	e.addApp(t)
	own, err := e.id.IssueTokens(context.Background(), oaClient, banking.SandboxOrgID, banking.SandboxUserID, []string{banking.ScopeOpenID})
	if err != nil {
		t.Fatal(err)
	}
	creds := map[string]string{"client_id": oaClient, "client_secret": oaSecret}
	with := func(extra map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range creds {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	asJSON := func(m map[string]string) string {
		b, _ := json.Marshal(m)
		return string(b)
	}
	asForm := func(m map[string]string) string {
		v := url.Values{}
		for k, val := range m {
			v.Set(k, val)
		}
		return v.Encode()
	}
	refresh := with(map[string]string{"grant_type": "refresh_token", "refresh_token": own.RefreshToken})
	revoke := with(map[string]string{"token": "00000000-0000-4000-8000-000000000000-1"})
	change := with(map[string]string{"access_token": own.AccessToken, "new_client_secret": strings.Repeat("J", 40)})
	wrong := func(m map[string]string) map[string]string {
		c := with(m)
		c["client_secret"] = "wrong"
		return c
	}
	const form = "application/x-www-form-urlencoded"
	for _, c := range []struct {
		name, path, ctype, query, body string
		status                         int
		code                           string
	}{
		{"token, JSON", "/ic/sso/api/v2/oauth/token", "application/json", "", asJSON(refresh), 400, "invalid_request"},
		{"un-versioned token, JSON", "/ic/sso/api/oauth/token", "application/json; charset=utf-8", "", asJSON(refresh), 400, "invalid_request"},
		{"token, no Content-Type", "/ic/sso/api/v2/oauth/token", "", "", asForm(refresh), 400, "invalid_request"},
		{"token, chunked JSON", "/ic/sso/api/v2/oauth/token", "application/json", "", "chunked:" + asJSON(refresh), 400, "invalid_request"},
		{"change secret, empty body of unknown length and query", changeSecretPath, "application/json", asForm(wrong(change)), "chunked:", 401, "invalid_client"},
		{"token, multipart", "/ic/sso/api/v2/oauth/token", "multipart/form-data; boundary=x", "", "--x--\r\n", 400, "invalid_request"},
		{"token, form, wrong secret", "/ic/sso/api/v2/oauth/token", form, "", asForm(wrong(refresh)), 401, "invalid_client"},
		{"token, JSON, wrong secret", "/ic/sso/api/v2/oauth/token", "application/json", "", asJSON(wrong(refresh)), 400, "invalid_request"},
		{"token, empty form", "/ic/sso/api/v2/oauth/token", form, "", "", 401, "invalid_client"},
		{"revoke v1, JSON", "/ic/sso/api/v1/oauth/revoke", "application/json", "", asJSON(revoke), 400, "invalid_request"},
		{"revoke v2, JSON", "/ic/sso/api/v2/oauth/revoke", "application/json", "", asJSON(revoke), 400, "invalid_request"},
		{"revoke, form, wrong secret", "/ic/sso/api/v2/oauth/revoke", form, "", asForm(wrong(revoke)), 401, "invalid_client"},
		{"change secret, JSON", changeSecretPath, "application/json", "", asJSON(change), 400, "invalid_request"},
		{"change secret, JSON and query", changeSecretPath, "application/json", asForm(change), "{}", 400, "invalid_request"},
		{"change secret, form, wrong secret", changeSecretPath, form, "", asForm(wrong(change)), 401, "invalid_client"},
		{"change secret, query, wrong secret", changeSecretPath, "application/json", asForm(wrong(change)), "", 401, "invalid_client"},
		{"authorize, JSON", "/ic/sso/api/v2/oauth/authorize", "application/json", "", asJSON(map[string]string{"client_id": oaClient}), 400, "invalid_request"},
	} {
		t.Run(c.name, func(t *testing.T) {
			target := e.srv.URL + c.path
			if c.query != "" {
				target += "?" + c.query
			}
			// A reader of unknown length makes the client send the body
			// chunked, so the server sees no Content-Length.
			var body io.Reader = strings.NewReader(c.body)
			if rest, ok := strings.CutPrefix(c.body, "chunked:"); ok {
				body = io.MultiReader(strings.NewReader(rest))
			}
			req, _ := http.NewRequest("POST", target, body)
			if c.ctype != "" {
				req.Header.Set("Content-Type", c.ctype)
			}
			resp, err := noRedirect().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var m map[string]any
			if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
				t.Fatalf("%d, body: %v", resp.StatusCode, err)
			}
			if resp.StatusCode != c.status || m["error"] != c.code || m["error_description"] == "" || len(m) != 2 {
				t.Fatalf("%d %v, want %d %s", resp.StatusCode, m, c.status, c.code)
			}
		})
	}
	// None of the refused requests changed the secret or revoked the token.
	if st, m := e.tokenCall(t, "/ic/sso/api/v2/oauth/token", refreshForm(own.RefreshToken)); st != 200 {
		t.Fatalf("refresh after the refused requests: %d %v", st, m)
	}
}
