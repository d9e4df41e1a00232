package bankapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"partnerapi/internal/banking"
)

// TestOAuthRepeatedParameter holds the OAuth endpoints to RFC 6749 §3.1
// and §3.2: a request parameter included more than once makes the request
// invalid_request (§4.1.2.1, §5.2), answered in the OAuth envelope and not
// redirected, rather than read as its first value. The same request with
// each parameter once is still served, and no refused request changed
// anything.
func TestOAuthRepeatedParameter(t *testing.T) {
	e := newIDEnv(t)
	e.addApp(t)
	own, err := e.id.IssueTokens(context.Background(), oaClient, banking.SandboxOrgID, banking.SandboxUserID, []string{banking.ScopeOpenID})
	if err != nil {
		t.Fatal(err)
	}
	const form = "application/x-www-form-urlencoded"
	refresh := "grant_type=refresh_token&client_id=" + oaClient + "&client_secret=" + url.QueryEscape(oaSecret) + "&refresh_token=" + url.QueryEscape(own.RefreshToken)
	for _, c := range []struct {
		name, method, path, query, body string
	}{
		{"token, client_id twice", "POST", "/ic/sso/api/v2/oauth/token", "", refresh + "&client_id=other"},
		{"token, grant_type twice, same value", "POST", "/ic/sso/api/v1/oauth/token", "", refresh + "&grant_type=refresh_token"},
		{"token, a key spelt two ways", "POST", "/ic/sso/api/oauth/token", "", refresh + "&%67rant_type=authorization_code"},
		{"token, once in the query and once in the body", "POST", "/ic/sso/api/v2/oauth/token", "client_id=" + oaClient, refresh},
		{"token, an empty repeat", "POST", "/ic/sso/api/v2/oauth/token", "", refresh + "&refresh_token="},
		{"revoke, token twice", "POST", "/ic/sso/api/v2/oauth/revoke", "", "client_id=" + oaClient + "&client_secret=" + url.QueryEscape(oaSecret) + "&token=a&token=b"},
		{"change secret, query repeated", "POST", changeSecretPath, "client_id=a&client_id=b", ""},
		{"authorize page, redirect_uri twice", "GET", "/ic/sso/api/v2/oauth/authorize",
			authorizeForm(nil).Encode() + "&redirect_uri=https%3A%2F%2Fevil.example%2Fcb", ""},
		{"authorize submit, state twice", "POST", "/ic/sbbid/api/v2/oauth/authorize", "",
			authorizeForm(map[string]string{"consent": "allow"}).Encode() + "&state=x"},
	} {
		t.Run(c.name, func(t *testing.T) {
			target := e.srv.URL + c.path
			if c.query != "" {
				target += "?" + c.query
			}
			req, _ := http.NewRequest(c.method, target, strings.NewReader(c.body))
			if c.method == "POST" {
				req.Header.Set("Content-Type", form)
			}
			resp, err := noRedirect().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var m map[string]any
			if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
				t.Fatalf("%d %s, body: %v", resp.StatusCode, resp.Header.Get("Location"), err)
			}
			if desc, _ := m["error_description"].(string); resp.StatusCode != 400 || m["error"] != "invalid_request" ||
				!strings.Contains(desc, "more than once") || len(m) != 2 {
				t.Fatalf("%d %v, want 400 invalid_request", resp.StatusCode, m)
			}
		})
	}
	if st, m := e.tokenCall(t, "/ic/sso/api/v2/oauth/token", refreshForm(own.RefreshToken)); st != 200 {
		t.Fatalf("refresh after the refused requests: %d %v", st, m)
	}
}
