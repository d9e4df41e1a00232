package bankapi

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestOAuthAuthorizeErrorsRedirect: once the client_id and its
// registered redirect_uri are known good, every refusal of an
// authorization request goes back to the client at that redirect_uri as
// error, error_description and the request's state (RFC 6749 §4.1.2.1),
// whether the login page is asked for (GET) or posted (POST): a missing
// or unsupported response_type, a missing scope, a PKCE method other than
// S256 and a code_challenge that is no S256 challenge (RFC 7636 §4.2: 43
// characters of base64url; any other could never match a verifier, so the
// user would log in for a code that cannot be exchanged). An unknown
// client or an unregistered redirect_uri is still answered on the page,
// never redirected. Before, each of the first four was a 400 JSON body in
// the user's browser, the partner never learning of it, and a malformed
// challenge was taken.
func TestOAuthAuthorizeErrorsRedirect(t *testing.T) {
	e := newIDEnv(t)
	e.addApp(t)
	const path = "/ic/sso/api/v2/oauth/authorize"
	for _, tc := range []struct {
		name    string
		mod     map[string]string // "": the parameter is left out
		status  int
		errCode string
	}{
		{"response_type token", map[string]string{"response_type": "token"}, 302, "unsupported_response_type"},
		{"no response_type", map[string]string{"response_type": ""}, 302, "invalid_request"},
		{"no scope", map[string]string{"scope": ""}, 302, "invalid_scope"},
		{"plain PKCE", map[string]string{"code_challenge_method": "plain"}, 302, "invalid_request"},
		{"challenge without method", map[string]string{"code_challenge_method": ""}, 302, "invalid_request"},
		{"short challenge", map[string]string{"code_challenge": "abc"}, 302, "invalid_request"},
		{"challenge not base64url", map[string]string{"code_challenge": strings.Repeat("+", 43)}, 302, "invalid_request"},
		{"unknown client", map[string]string{"client_id": "nope", "response_type": "token"}, 400, "invalid_request"},
		{"unregistered redirect_uri", map[string]string{"redirect_uri": "https://evil.example/cb", "scope": ""}, 400, "invalid_request"},
		{"no redirect_uri", map[string]string{"redirect_uri": ""}, 400, "invalid_request"},
	} {
		for _, method := range []string{"GET", "POST"} {
			t.Run(tc.name+" "+method, func(t *testing.T) {
				v := authorizeForm(nil)
				if method == "GET" {
					v = authorizeForm(map[string]string{"login": "", "password": "", "consent": ""})
				}
				for k, val := range tc.mod {
					if val == "" {
						v.Del(k)
					} else {
						v.Set(k, val)
					}
				}
				var resp *http.Response
				var err error
				if method == "GET" {
					resp, err = noRedirect().Get(e.srv.URL + path + "?" + v.Encode())
				} else {
					resp, err = noRedirect().PostForm(e.srv.URL+path, v)
				}
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != tc.status {
					t.Fatalf("status %d, want %d (Location %q)", resp.StatusCode, tc.status, resp.Header.Get("Location"))
				}
				if tc.status != 302 {
					if resp.Header.Get("Location") != "" {
						t.Fatalf("redirected to %q", resp.Header.Get("Location"))
					}
					return
				}
				loc, err := url.Parse(resp.Header.Get("Location"))
				if err != nil || loc.Scheme+"://"+loc.Host+loc.Path != oaRedirect {
					t.Fatalf("Location %q, want the registered %s", resp.Header.Get("Location"), oaRedirect)
				}
				q := loc.Query()
				if q.Get("error") != tc.errCode || q.Get("error_description") == "" || q.Get("state") != "xyz" || q.Has("code") {
					t.Fatalf("Location query %v, want error=%s with a description and state=xyz, no code", q, tc.errCode)
				}
			})
		}
	}
}
