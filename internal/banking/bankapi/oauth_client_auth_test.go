package bankapi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"partnerapi/internal/banking"
)

// TestOAuthClientAuthentication holds the client endpoints under /ic/sso
// to RFC 6749 §2.3 and §5.2: a client authenticates with client_id and
// client_secret in the form (client_secret_post) or with HTTP Basic
// (client_secret_basic, §2.3.1, each half form-urlencoded), never with
// both; a failed authentication is 401 invalid_client with the Basic
// challenge, whichever way it was tried; every other refusal is 400
// without one, a missing parameter invalid_request (§5.2). The authorization endpoint, which a browser opens, answers
// an unknown client_id 400 invalid_request, never a 401 whose challenge
// would make the browser prompt for a password.
func TestOAuthClientAuthentication(t *testing.T) {
	e := newIDEnv(t)
	e.addApp(t)
	ctx := context.Background()
	basic := func(id, secret string) string {
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(id)+":"+url.QueryEscape(secret)))
	}
	refresh := func(creds bool) url.Values {
		p, err := e.id.IssueTokens(ctx, oaClient, banking.SandboxOrgID, banking.SandboxUserID, []string{banking.ScopeOpenID})
		if err != nil {
			t.Fatal(err)
		}
		v := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {p.RefreshToken}}
		if creds {
			v.Set("client_id", oaClient)
			v.Set("client_secret", oaSecret)
		}
		return v
	}
	revoke := func(creds bool) url.Values {
		v := url.Values{"token": {"00000000-0000-4000-8000-000000000000-1"}}
		if creds {
			v.Set("client_id", oaClient)
			v.Set("client_secret", oaSecret)
		}
		return v
	}
	with := func(v url.Values, k, val string) url.Values {
		v.Set(k, val)
		return v
	}
	const tokenPath, revokePath = "/ic/sso/api/v2/oauth/token", "/ic/sso/api/v1/oauth/revoke"
	for _, c := range []struct {
		name, method, path, auth string
		form                     url.Values
		status                   int
		code                     string // "" for a success
		challenge                string // the WWW-Authenticate wanted, "" for none
	}{
		{"token, form", "POST", tokenPath, "", refresh(true), 200, "", ""},
		{"token, form, wrong secret", "POST", tokenPath, "", with(refresh(true), "client_secret", "wrong"), 401, "invalid_client", `Basic realm="banking"`},
		{"token, no credentials", "POST", tokenPath, "", refresh(false), 401, "invalid_client", `Basic realm="banking"`},
		{"token, Basic", "POST", tokenPath, basic(oaClient, oaSecret), refresh(false), 200, "", ""},
		{"token, Basic and the same client_id in the form", "POST", tokenPath, basic(oaClient, oaSecret), with(refresh(false), "client_id", oaClient), 200, "", ""},
		{"token, lower-case basic", "POST", tokenPath, "basic" + strings.TrimPrefix(basic(oaClient, oaSecret), "Basic"), refresh(false), 200, "", ""},
		// RFC 9110 §11.4: credentials = auth-scheme [ 1*SP token68 ].
		{"token, Basic after two spaces", "POST", tokenPath, "Basic " + basic(oaClient, oaSecret)[len("Basic"):], refresh(false), 200, "", ""},
		{"token, Basic after a tab", "POST", tokenPath, "Basic\t" + basic(oaClient, oaSecret)[len("Basic "):], refresh(false), 401, "invalid_client", `Basic realm="banking"`},
		{"token, Basic, wrong secret", "POST", tokenPath, basic(oaClient, "wrong"), refresh(false), 401, "invalid_client", `Basic realm="banking"`},
		{"token, Basic, unknown client", "POST", tokenPath, basic("nope", oaSecret), refresh(false), 401, "invalid_client", `Basic realm="banking"`},
		{"token, Basic not Base64", "POST", tokenPath, "Basic !!!", refresh(true), 401, "invalid_client", `Basic realm="banking"`},
		{"token, Basic without a colon", "POST", tokenPath, "Basic " + base64.StdEncoding.EncodeToString([]byte(oaClient)), refresh(false), 401, "invalid_client", `Basic realm="banking"`},
		{"token, Basic and form secret", "POST", tokenPath, basic(oaClient, oaSecret), refresh(true), 400, "invalid_request", ""},
		{"token, Basic and another client_id", "POST", tokenPath, basic(oaClient, oaSecret), with(refresh(false), "client_id", banking.SandboxClientID), 400, "invalid_request", ""},
		{"token, Bearer header ignored", "POST", tokenPath, "Bearer 00000000-0000-4000-8000-000000000000-1", refresh(true), 200, "", ""},
		{"token, Bearer header, wrong form secret", "POST", tokenPath, "Bearer 00000000-0000-4000-8000-000000000000-1", with(refresh(true), "client_secret", "wrong"), 401, "invalid_client", `Basic realm="banking"`},
		{"token, unknown grant", "POST", tokenPath, basic(oaClient, oaSecret), url.Values{"grant_type": {"password"}}, 400, "unsupported_grant_type", ""},
		// A missing parameter is invalid_request (§5.2), whatever else
		// the request lacks.
		{"token, no grant_type", "POST", tokenPath, basic(oaClient, oaSecret), url.Values{}, 400, "invalid_request", ""},
		{"token, code grant without a code", "POST", tokenPath, basic(oaClient, oaSecret), url.Values{"grant_type": {"authorization_code"}, "redirect_uri": {oaRedirect}}, 400, "invalid_request", ""},
		{"token, refresh grant without a refresh token", "POST", tokenPath, basic(oaClient, oaSecret), url.Values{"grant_type": {"refresh_token"}}, 400, "invalid_request", ""},
		{"token, unknown refresh token", "POST", tokenPath, basic(oaClient, oaSecret), url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"x"}}, 400, "invalid_grant", ""},
		{"revoke, Basic", "POST", revokePath, basic(oaClient, oaSecret), revoke(false), 200, "", ""},
		{"revoke, form, wrong secret", "POST", revokePath, "", with(revoke(true), "client_secret", "wrong"), 401, "invalid_client", `Basic realm="banking"`},
		{"revoke, Basic, no token", "POST", revokePath, basic(oaClient, oaSecret), url.Values{}, 400, "invalid_request", ""},
		{"change secret, form, wrong secret", "POST", changeSecretPath, "", url.Values{"client_id": {oaClient}, "client_secret": {"wrong"},
			"access_token": {"x"}, "new_client_secret": {strings.Repeat("J", 40)}}, 401, "invalid_client", `Basic realm="banking"`},
		{"change secret, Basic, wrong secret", "POST", changeSecretPath, basic(oaClient, "wrong"), url.Values{
			"access_token": {"x"}, "new_client_secret": {strings.Repeat("J", 40)}}, 401, "invalid_client", `Basic realm="banking"`},
		{"change secret, missing field", "POST", changeSecretPath, "", url.Values{"client_id": {oaClient}}, 400, "invalid_request", ""},
		{"authorize, unknown client", "GET", "/ic/sso/api/v2/oauth/authorize", "", with(authorizeForm(nil), "client_id", "nope"), 400, "invalid_request", ""},
		{"authorize form, unknown client", "POST", "/ic/sso/api/v2/oauth/authorize", "", with(authorizeForm(nil), "client_id", "nope"), 400, "invalid_request", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var req *http.Request
			if c.method == "GET" {
				req, _ = http.NewRequest("GET", e.srv.URL+c.path+"?"+c.form.Encode(), nil)
			} else {
				req, _ = http.NewRequest("POST", e.srv.URL+c.path, strings.NewReader(c.form.Encode()))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			}
			if c.auth != "" {
				req.Header.Set("Authorization", c.auth)
			}
			resp, err := noRedirect().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if got := resp.Header.Get("WWW-Authenticate"); got != c.challenge {
				t.Errorf("WWW-Authenticate %q, want %q", got, c.challenge)
			}
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, c.status)
			}
			if c.code == "" {
				return
			}
			var m map[string]any
			if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
				t.Fatal(err)
			}
			if m["error"] != c.code || m["error_description"] == "" || len(m) != 2 {
				t.Fatalf("body %v, want error %s", m, c.code)
			}
		})
	}
}
