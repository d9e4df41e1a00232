package bankapi

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestOAuthNoStoreHeaders: every answer of the token endpoint, and of
// change-client-secret, which also answers about credentials, carries
// Cache-Control: no-store and Pragma: no-cache, as RFC 6749 §5.1 requires
// of a response with tokens or credentials (Pragma for HTTP/1.0 caches
// that do not read Cache-Control), errors included (§5.2 answers share
// §5.1's rules). Before, Pragma was missing from all of them.
func TestOAuthNoStoreHeaders(t *testing.T) {
	e := newIDEnv(t)
	e.addApp(t)
	_, loc, _ := e.login(t, authorizeForm(nil))
	code := loc.Query().Get("code")
	// A token of the test app, for change-client-secret.
	_, m := e.tokenCall(t, "/ic/sso/api/v2/oauth/token", codeForm(code, oaVerifier))
	access, _ := m["access_token"].(string)
	_, loc, _ = e.login(t, authorizeForm(nil))
	for _, tc := range []struct {
		name, path string
		form       url.Values
		status     int
	}{
		{"token", "/ic/sso/api/v2/oauth/token", codeForm(loc.Query().Get("code"), oaVerifier), 200},
		{"token, invalid_grant", "/ic/sso/api/v2/oauth/token", codeForm("no-such-code", oaVerifier), 400},
		{"token, invalid_client", "/ic/sso/api/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"x"}, "client_id": {oaClient}, "client_secret": {"wrong"}}, 401},
		{"change-client-secret", "/ic/sso/api/v1/change-client-secret", url.Values{"client_id": {oaClient}, "client_secret": {oaSecret},
			"access_token": {access}, "new_client_secret": {strings.Repeat("N", 40)}}, 200},
		{"change-client-secret, refused", "/ic/sso/api/v1/change-client-secret", url.Values{"client_id": {oaClient}, "client_secret": {"wrong"},
			"access_token": {access}, "new_client_secret": {strings.Repeat("M", 40)}}, 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := http.PostForm(e.srv.URL+tc.path, tc.form)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.status || resp.Header.Get("Cache-Control") != "no-store" || resp.Header.Get("Pragma") != "no-cache" {
				t.Fatalf("%d Cache-Control %q Pragma %q, want %d no-store and no-cache", resp.StatusCode,
					resp.Header.Get("Cache-Control"), resp.Header.Get("Pragma"), tc.status)
			}
		})
	}
}
