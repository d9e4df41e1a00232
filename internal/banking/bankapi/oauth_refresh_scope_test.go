package bankapi

import (
	"testing"
)

// TestOAuthRefreshScope: a refresh request may name a scope (RFC 6749
// §6). One within the grant gets an access token of that scope alone,
// answered in scope, while the refresh token keeps the whole grant, so
// the next refresh without a scope has all of it again (§6: a new refresh
// token's scope is the used one's). One beyond the grant is 400
// invalid_scope (§5.2), and the refresh token stays unused. Before, the
// scope was ignored: a broader one was answered 200 with the grant's
// scope and a narrower one with the whole grant.
func TestOAuthRefreshScope(t *testing.T) {
	const tokenPath = "/ic/sso/api/v2/oauth/token"
	for _, tc := range []struct {
		name, scope string
		status      int
		wantScope   string // answered, or the OAuth error when status is 400
		clientInfo  int    // the new access token at client-info
		userInfo    int    // and at user-info (openid)
	}{
		{"no scope", "", 200, "openid GET_CLIENT_ACCOUNTS", 200, 200},
		{"the whole grant, another order", "GET_CLIENT_ACCOUNTS openid", 200, "openid GET_CLIENT_ACCOUNTS", 200, 200},
		{"narrower", "GET_CLIENT_ACCOUNTS", 200, "GET_CLIENT_ACCOUNTS", 200, 403},
		{"broader", "openid GET_CLIENT_ACCOUNTS PAY_DOC_RU", 400, "invalid_scope", 0, 0},
		{"another scope", "PAY_DOC_RU", 400, "invalid_scope", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newIDEnv(t)
			e.addApp(t)
			_, loc, _ := e.login(t, authorizeForm(nil))
			st, m := e.tokenCall(t, tokenPath, codeForm(loc.Query().Get("code"), oaVerifier))
			if st != 200 {
				t.Fatalf("exchange: %d %v", st, m)
			}
			refresh := m["refresh_token"].(string)
			form := refreshForm(refresh)
			if tc.scope != "" {
				form.Set("scope", tc.scope)
			}
			st, m = e.tokenCall(t, tokenPath, form)
			if tc.status == 400 {
				if st != 400 || m["error"] != tc.wantScope {
					t.Fatalf("got %d %v, want 400 %s", st, m, tc.wantScope)
				}
				// The refused request used nothing up.
				if st, m := e.tokenCall(t, tokenPath, refreshForm(refresh)); st != 200 || m["scope"] != "openid GET_CLIENT_ACCOUNTS" {
					t.Fatalf("refresh after the refusal: %d %v", st, m)
				}
				return
			}
			if st != 200 || m["scope"] != tc.wantScope {
				t.Fatalf("got %d %v, want 200 with scope %q", st, m, tc.wantScope)
			}
			access := m["access_token"].(string)
			if st, _ := e.get(t, "/fintech/api/v1/client-info", "Bearer "+access, nil); st != tc.clientInfo {
				t.Fatalf("client-info: %d, want %d", st, tc.clientInfo)
			}
			if st, _ := e.get(t, "/ic/sso/api/v2/oauth/user-info", "Bearer "+access, nil); st != tc.userInfo {
				t.Fatalf("user-info: %d, want %d", st, tc.userInfo)
			}
			// The new refresh token carries the whole grant.
			if st, m := e.tokenCall(t, tokenPath, refreshForm(m["refresh_token"].(string))); st != 200 || m["scope"] != "openid GET_CLIENT_ACCOUNTS" {
				t.Fatalf("next refresh: %d %v, want the whole grant", st, m)
			}
		})
	}
}
