package bankapi

import (
	"testing"
)

// TestOAuthPKCEDowngrade: a token request is held to the PKCE choice of
// its authorization request. With a code_challenge the code needs the
// verifier that matches it (RFC 7636 §4.6); without one, a code_verifier
// in the token request is refused as invalid_grant too, since the OAuth
// security BCP (RFC 9700 §2.1.1) has the server accept a code_verifier
// only when the authorization request carried a code_challenge: otherwise
// an attacker who injects a code obtained without PKCE into a client that
// uses PKCE passes the check the client relies on. Before, such a code was
// exchanged (200). A refused code is used up, as any refused code is.
func TestOAuthPKCEDowngrade(t *testing.T) {
	e := newIDEnv(t)
	e.addApp(t)
	const tokenPath = "/ic/sso/api/v2/oauth/token"
	for _, tc := range []struct {
		name      string
		challenge bool   // the authorization request carried code_challenge (S256)
		verifier  string // code_verifier of the token request
		wantErr   string // "": 200
	}{
		{"challenge and its verifier", true, oaVerifier, ""},
		{"challenge without a verifier", true, "", "invalid_grant"},
		{"challenge and another verifier", true, "x" + oaVerifier[1:], "invalid_grant"},
		{"no challenge, no verifier", false, "", ""},
		{"no challenge but a verifier", false, oaVerifier, "invalid_grant"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			extra := map[string]string{}
			if !tc.challenge {
				extra = map[string]string{"code_challenge": "", "code_challenge_method": ""}
			}
			st, loc, _ := e.login(t, authorizeForm(extra))
			code := loc.Query().Get("code")
			if st != 302 || code == "" {
				t.Fatalf("authorize: %d %v", st, loc)
			}
			form := codeForm(code, tc.verifier)
			if tc.verifier == "" {
				form.Del("code_verifier")
			}
			st, m := e.tokenCall(t, tokenPath, form)
			if tc.wantErr == "" {
				if st != 200 || m["access_token"] == nil {
					t.Fatalf("got %d %v, want 200 with tokens", st, m)
				}
				return
			}
			if st != 400 || m["error"] != tc.wantErr {
				t.Fatalf("got %d %v, want 400 %s", st, m, tc.wantErr)
			}
			// The refused code is used up: the right request fails now.
			form = codeForm(code, oaVerifier)
			if !tc.challenge {
				form.Del("code_verifier")
			}
			if st, m := e.tokenCall(t, tokenPath, form); st != 400 || m["error"] != "invalid_grant" {
				t.Fatalf("refused code redeemed afterwards: %d %v", st, m)
			}
		})
	}
}
