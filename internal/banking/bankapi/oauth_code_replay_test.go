package bankapi

import (
	"context"
	"testing"

	"partnerapi/internal/banking"
)

// TestOAuthCodeReplayRevokesGrant: an authorization code is one-time
// (reference §3), and a second redemption is refused with invalid_grant
// and also revokes every token issued for the code (RFC 6749 §4.1.2: the
// server SHOULD revoke them, since a code used twice has been seen by
// someone else): the access token and refresh token of its exchange and
// every pair refreshed from them. A replay by another client, or of a code
// that was never redeemed, revokes nothing, and other grants of the same
// client and user keep working. Before, a replay was refused but the
// first exchange's tokens went on working for their whole lifetimes.
func TestOAuthCodeReplayRevokesGrant(t *testing.T) {
	const tokenPath = "/ic/sso/api/v2/oauth/token"
	const otherClient, otherSecret = "other-app", "other-secret-other-secret-other-secret-o"
	for _, tc := range []struct {
		name       string
		refresh    bool // refresh the first pair before the replay
		replayedBy string
		revoked    bool
	}{
		{"replay by the same client", false, oaClient, true},
		{"replay after a refresh", true, oaClient, true},
		{"replay by another client", false, otherClient, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newIDEnv(t)
			e.addApp(t)
			if err := e.id.Store.CreateApp(context.Background(), banking.PartnerApp{ClientID: otherClient,
				SecretHash: banking.HashSecret(otherSecret), RedirectURIs: []string{oaRedirect}}); err != nil {
				t.Fatal(err)
			}
			// Another grant of the same client and user, which no replay
			// of this code may touch.
			_, loc, _ := e.login(t, authorizeForm(nil))
			_, other := e.tokenCall(t, tokenPath, codeForm(loc.Query().Get("code"), oaVerifier))

			_, loc, _ = e.login(t, authorizeForm(nil))
			code := loc.Query().Get("code")
			st, m := e.tokenCall(t, tokenPath, codeForm(code, oaVerifier))
			if st != 200 {
				t.Fatalf("exchange: %d %v", st, m)
			}
			access, refresh := m["access_token"].(string), m["refresh_token"].(string)
			if tc.refresh {
				if st, m = e.tokenCall(t, tokenPath, refreshForm(refresh)); st != 200 {
					t.Fatalf("refresh: %d %v", st, m)
				}
				access, refresh = m["access_token"].(string), m["refresh_token"].(string)
			}
			replay := codeForm(code, oaVerifier)
			if tc.replayedBy == otherClient {
				replay.Set("client_id", otherClient)
				replay.Set("client_secret", otherSecret)
			}
			if st, m := e.tokenCall(t, tokenPath, replay); st != 400 || m["error"] != "invalid_grant" {
				t.Fatalf("replay: %d %v, want 400 invalid_grant", st, m)
			}
			wantAccess, wantRefresh := 200, 200
			if tc.revoked {
				wantAccess, wantRefresh = 401, 400
			}
			if st, eb := e.get(t, "/fintech/api/v1/client-info", "Bearer "+access, nil); st != wantAccess {
				t.Fatalf("the code's access token after the replay: %d %+v, want %d", st, eb, wantAccess)
			}
			if st, m := e.tokenCall(t, tokenPath, refreshForm(refresh)); st != wantRefresh {
				t.Fatalf("the code's refresh token after the replay: %d %v, want %d", st, m, wantRefresh)
			}
			// A code never issued revokes nothing either.
			if st, m := e.tokenCall(t, tokenPath, codeForm("00000000-0000-4000-8000-000000000000", oaVerifier)); st != 400 || m["error"] != "invalid_grant" {
				t.Fatalf("unknown code: %d %v", st, m)
			}
			if st, _ := e.get(t, "/fintech/api/v1/client-info", "Bearer "+other["access_token"].(string), nil); st != 200 {
				t.Fatalf("another grant's access token after the replay: %d", st)
			}
			if st, m := e.tokenCall(t, tokenPath, refreshForm(other["refresh_token"].(string))); st != 200 {
				t.Fatalf("another grant's refresh token after the replay: %d %v", st, m)
			}
		})
	}
}
