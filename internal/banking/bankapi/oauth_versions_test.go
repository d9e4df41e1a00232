package bankapi

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// A client configured with an OAuth version N (open-condo-software/condo's
// oauthVersion) takes the code at /ic/sbbid/api/vN/oauth/authorize and
// everything else at /ic/sso/api/vN/oauth/... (reference §3: "newer
// configs use /ic/sbbid/api/v{N}/oauth/authorize"). The whole flow runs on
// each version's paths: the login page, the form posted back to the path it
// was shown at, the code exchanged for tokens, user-info and revocation.
func TestOAuthVersionedClientPaths(t *testing.T) {
	for _, v := range []string{"v1", "v2"} {
		t.Run(v, func(t *testing.T) {
			e := newIDEnv(t)
			e.addApp(t)
			authorize := "/ic/sbbid/api/" + v + "/oauth/authorize"
			page := authorizeForm(map[string]string{"login": "", "password": "", "consent": ""})
			resp, err := http.Get(e.srv.URL + authorize + "?" + page.Encode())
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !strings.Contains(string(body), `<form method="post">`) {
				t.Fatalf("GET %s: %d %.200s", authorize, resp.StatusCode, body)
			}

			resp, err = noRedirect().PostForm(e.srv.URL+authorize, authorizeForm(nil))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			loc, _ := url.Parse(resp.Header.Get("Location"))
			code := loc.Query().Get("code")
			if resp.StatusCode != 302 || code == "" || loc.Query().Get("state") != "xyz" {
				t.Fatalf("POST %s: %d %v", authorize, resp.StatusCode, loc)
			}

			st, m := e.tokenCall(t, "/ic/sso/api/"+v+"/oauth/token", codeForm(code, oaVerifier))
			access, _ := m["access_token"].(string)
			refresh, _ := m["refresh_token"].(string)
			if st != 200 || access == "" || refresh == "" {
				t.Fatalf("token at %s: %d %v", v, st, m)
			}
			if st, _ := e.get(t, "/ic/sso/api/"+v+"/oauth/user-info", "Bearer "+access, nil); st != 200 {
				t.Fatalf("user-info at %s: %d", v, st)
			}
			rv := url.Values{"client_id": {oaClient}, "client_secret": {oaSecret}, "token": {refresh}, "token_type_hint": {"refresh_token"}}
			if st, m := e.tokenCall(t, "/ic/sso/api/"+v+"/oauth/revoke", rv); st != 200 {
				t.Fatalf("revoke at %s: %d %v", v, st, m)
			}
			if st, m := e.tokenCall(t, "/ic/sso/api/"+v+"/oauth/token", refreshForm(refresh)); st != 400 || m["error"] != "invalid_grant" {
				t.Fatalf("refresh after revoke at %s: %d %v", v, st, m)
			}
		})
	}
}
