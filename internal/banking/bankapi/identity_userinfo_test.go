package bankapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"partnerapi/internal/banking"
)

// TestUserInfoGolden pins the user-info claims of the sandbox user
// (reference §3). Every claim is there, as a string: open-condo-software/
// condo validates user-info with a schema that requires inn, OrgName,
// orgJuridicalAddress, email, userGuid and phone_number as strings, and
// calls phone_number.startsWith, so a missing claim fails its sign-in.
func TestUserInfoGolden(t *testing.T) {
	e := newIDEnv(t)
	tok := e.token(t, banking.ScopeOpenID)
	req, _ := http.NewRequest("GET", e.srv.URL+"/ic/sso/api/v1/oauth/user-info", nil)
	req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, raw)
	}
	var claims map[string]any
	if err := json.Unmarshal(raw, &claims); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"inn", "OrgName", "orgJuridicalAddress", "email", "userGuid", "phone_number"} {
		if s, ok := claims[name].(string); !ok || s == "" {
			t.Errorf("claim %s = %#v, condo requires a string", name, claims[name])
		}
	}
	// HashOrgId has the shape of an invoice draft's payeeOrgIdHash
	// (reference §4.1, ^[0-9a-f]{64}$), which names an organisation by it.
	if h, _ := claims["HashOrgId"].(string); !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(h) {
		t.Errorf("HashOrgId %q is not 64 lower-case hex digits", h)
	}
	identityGolden(t, "testdata/identity_user_info.golden", raw)
}

// userCryptoType follows the user's signing tool (reference §3: SMS or
// TOKEN), and claims the bank was not told are empty strings, never
// missing.
func TestUserInfoClaimsPerUser(t *testing.T) {
	e := newIDEnv(t)
	ctx := context.Background()
	tok := e.token(t, banking.ScopeOpenID)
	var ui map[string]any
	if st, _ := e.get(t, "/ic/sso/api/v2/oauth/user-info", "Bearer "+tok.AccessToken, &ui); st != 200 || ui["userCryptoType"] != "TOKEN" {
		t.Fatalf("token user: %d %v", st, ui["userCryptoType"])
	}
	if err := e.id.Store.SetUserSigningMethod(ctx, banking.SandboxUserID, banking.SigningOneTimePassword); err != nil {
		t.Fatal(err)
	}
	ui = nil
	if st, _ := e.get(t, "/ic/sso/api/v2/oauth/user-info", "Bearer "+tok.AccessToken, &ui); st != 200 || ui["userCryptoType"] != "SMS" {
		t.Fatalf("one-time-password user: %d %v", st, ui["userCryptoType"])
	}

	const org, user = "org-bare", "user-bare"
	if err := e.id.Store.CreateOrg(ctx, banking.Organisation{ID: org, Name: "ООО Голое", INN: "7830002293"}); err != nil {
		t.Fatal(err)
	}
	if err := e.id.Store.CreateUser(ctx, banking.User{ID: user, OrgID: org, Login: "bare"}); err != nil {
		t.Fatal(err)
	}
	p, err := e.id.IssueTokens(ctx, banking.SandboxClientID, org, user, []string{banking.ScopeOpenID})
	if err != nil {
		t.Fatal(err)
	}
	ui = nil
	if st, _ := e.get(t, "/ic/sso/api/v2/oauth/user-info", "Bearer "+p.AccessToken, &ui); st != 200 {
		t.Fatalf("bare user: %d", st)
	}
	for name, want := range map[string]string{"orgJuridicalAddress": "", "phone_number": "", "email": "",
		"orgLawForm": "Общество с ограниченной ответственностью", "orgLawFormShort": "ООО"} {
		if got, ok := ui[name].(string); !ok || got != want {
			t.Errorf("claim %s = %#v, want %q", name, ui[name], want)
		}
	}
}

// user-info answers the provider's JWT (reference §3) unless the client
// prefers JSON: the official Node SDK reads the body as a JWT while its
// axios sends Accept "application/json, text/plain, */*", and condo's
// openid-client asks for application/jwt.
func TestUserInfoJWTOrJSON(t *testing.T) {
	e := newIDEnv(t)
	bankKey, err := banking.NewBankKey(e.now)
	if err != nil {
		t.Fatal(err)
	}
	e.id.IDTokens = banking.NewIDTokenSigner("https://bank.test", bankKey)
	tok := e.token(t, banking.ScopeOpenID)
	for _, tc := range []struct {
		accept string
		jwt    bool
	}{
		{"", true},
		{"application/jwt", true},
		{"application/json, text/plain, */*", true}, // axios, the Node SDK
		{"*/*", true},
		{"application/*", true},
		{"application/json;q=0.5, application/jwt", true},
		{"application/json", false},
		{"application/json, */*;q=0.1", false},
		{"application/jwt;q=0.2, application/json", false},
	} {
		t.Run(tc.accept, func(t *testing.T) {
			req, _ := http.NewRequest("GET", e.srv.URL+"/ic/sso/api/v2/oauth/user-info", nil)
			req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
			if tc.accept != "" {
				req.Header.Set("Accept", tc.accept)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			ct := resp.Header.Get("Content-Type")
			if tc.jwt {
				if ct != "application/jwt" || bytes.Count(body, []byte(".")) != 2 {
					t.Fatalf("want a JWT: %d %s %.80s", resp.StatusCode, ct, body)
				}
				return
			}
			var claims map[string]any
			if !strings.HasPrefix(ct, "application/json") || json.Unmarshal(body, &claims) != nil || claims["inn"] != banking.SandboxOrgINN {
				t.Fatalf("want JSON claims: %d %s %.80s", resp.StatusCode, ct, body)
			}
		})
	}
}
