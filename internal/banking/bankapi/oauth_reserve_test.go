package bankapi

import (
	"testing"
	"time"
)

// TestOAuthRefreshReserveConfigurable: the reserve of a used refresh token
// is the deployment's (reference §15 #7: 2 h, configurable), counted from
// its first use, and 0 ends the used token at once.
func TestOAuthRefreshReserveConfigurable(t *testing.T) {
	for _, tc := range []struct {
		name    string
		reserve time.Duration
	}{
		{"one hour", time.Hour},
		{"none", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newIDEnv(t)
			e.addApp(t)
			e.id.RefreshReserve = tc.reserve
			_, loc, _ := e.login(t, authorizeForm(nil))
			st, m := e.tokenCall(t, "/ic/sso/api/v2/oauth/token", codeForm(loc.Query().Get("code"), oaVerifier))
			if st != 200 {
				t.Fatalf("exchange: %d %v", st, m)
			}
			used := m["refresh_token"].(string)
			if st, m := e.tokenCall(t, "/ic/sso/api/v2/oauth/token", refreshForm(used)); st != 200 {
				t.Fatalf("refresh: %d %v", st, m)
			}
			if tc.reserve > 0 {
				e.now = e.now.Add(tc.reserve - time.Second)
				if st, m := e.tokenCall(t, "/ic/sso/api/v2/oauth/token", refreshForm(used)); st != 200 {
					t.Fatalf("within the reserve: %d %v", st, m)
				}
				e.now = e.now.Add(time.Second)
			}
			st, m = e.tokenCall(t, "/ic/sso/api/v2/oauth/token", refreshForm(used))
			if st != 400 || m["error"] != "invalid_grant" || m["error_description"] != "Unknown refresh token" {
				t.Fatalf("after the reserve: %d %v", st, m)
			}
		})
	}
}
