package bankapi

import (
	"net/url"
	"testing"
)

// Revoking a refresh token revokes its grant (RFC 7009 §2.1): the access
// tokens issued with it and before it in its chain answer 401 at once, not
// after their hour, and the chain's reserve refresh token no longer
// refreshes. Another grant of the same client is untouched.
func TestOAuthRevokeRefreshCascades(t *testing.T) {
	e := newIDEnv(t)
	e.addApp(t)
	pair := func() (access, refresh string) {
		t.Helper()
		_, loc, _ := e.login(t, authorizeForm(nil))
		st, m := e.tokenCall(t, "/ic/sso/api/v2/oauth/token", codeForm(loc.Query().Get("code"), oaVerifier))
		if st != 200 {
			t.Fatalf("exchange: %d %v", st, m)
		}
		return m["access_token"].(string), m["refresh_token"].(string)
	}
	firstAccess, reserve := pair()
	otherAccess, _ := pair()
	st, m := e.tokenCall(t, "/ic/sso/api/v2/oauth/token", refreshForm(reserve))
	if st != 200 {
		t.Fatalf("refresh: %d %v", st, m)
	}
	access, refresh := m["access_token"].(string), m["refresh_token"].(string)
	for _, a := range []string{firstAccess, access, otherAccess} {
		if st, _ := e.get(t, "/ic/sso/api/v2/oauth/user-info", "Bearer "+a, nil); st != 200 {
			t.Fatalf("before the revocation: %d", st)
		}
	}
	rv := url.Values{"client_id": {oaClient}, "client_secret": {oaSecret}, "token": {refresh}, "token_type_hint": {"refresh_token"}}
	if st, _ := e.tokenCall(t, "/ic/sso/api/v2/oauth/revoke", rv); st != 200 {
		t.Fatalf("revoke: %d", st)
	}
	for name, a := range map[string]string{"the access token issued with it": access, "the grant's first access token": firstAccess} {
		if st, _ := e.get(t, "/ic/sso/api/v2/oauth/user-info", "Bearer "+a, nil); st != 401 {
			t.Errorf("%s: %d, want 401", name, st)
		}
	}
	if st, m := e.tokenCall(t, "/ic/sso/api/v2/oauth/token", refreshForm(reserve)); st != 400 || m["error"] != "invalid_grant" {
		t.Errorf("the reserve refresh token: %d %v", st, m)
	}
	if st, _ := e.get(t, "/ic/sso/api/v2/oauth/user-info", "Bearer "+otherAccess, nil); st != 200 {
		t.Errorf("another grant's access token: %d, want 200", st)
	}
}
