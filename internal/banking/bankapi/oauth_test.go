package bankapi

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/gost"
)

const (
	oaClient   = "oauth-test-app"
	oaSecret   = "s3cret-s3cret-s3cret-s3cret-s3cret-s3cre"
	oaRedirect = "https://partner.example/cb"
	oaVerifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
)

func noRedirect() *http.Client {
	return &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func (e *idEnv) addApp(t *testing.T) {
	t.Helper()
	err := e.id.Store.CreateApp(context.Background(), banking.PartnerApp{ClientID: oaClient, Name: "Test partner",
		SecretHash: banking.HashSecret(oaSecret), RedirectURIs: []string{oaRedirect}})
	if err != nil {
		t.Fatal(err)
	}
}

func challenge(v string) string {
	s := sha256.Sum256([]byte(v))
	return base64.RawURLEncoding.EncodeToString(s[:])
}

func authorizeForm(extra map[string]string) url.Values {
	v := url.Values{"response_type": {"code"}, "client_id": {oaClient}, "redirect_uri": {oaRedirect},
		"scope": {"openid GET_CLIENT_ACCOUNTS"}, "state": {"xyz"}, "code_challenge": {challenge(oaVerifier)},
		"code_challenge_method": {"S256"}, "login": {banking.SandboxUserLogin}, "password": {banking.SandboxUserPassword},
		"consent": {"allow"}}
	for k, val := range extra {
		if val == "" {
			v.Del(k)
		} else {
			v.Set(k, val)
		}
	}
	return v
}

// login posts the login form and returns the redirect location.
func (e *idEnv) login(t *testing.T, form url.Values) (int, *url.URL, string) {
	t.Helper()
	resp, err := noRedirect().PostForm(e.srv.URL+"/ic/sso/api/v2/oauth/authorize", form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	loc, _ := url.Parse(resp.Header.Get("Location"))
	return resp.StatusCode, loc, string(body)
}

func (e *idEnv) tokenCall(t *testing.T, path string, form url.Values) (int, map[string]any) {
	t.Helper()
	resp, err := http.PostForm(e.srv.URL+path, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

func codeForm(code, verifier string) url.Values {
	return url.Values{"grant_type": {"authorization_code"}, "code": {code}, "client_id": {oaClient},
		"client_secret": {oaSecret}, "redirect_uri": {oaRedirect}, "code_verifier": {verifier}}
}

func refreshForm(rt string) url.Values {
	return url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {oaClient},
		"client_secret": {oaSecret}, "redirect_uri": {oaRedirect}}
}

func TestOAuthAuthorizePage(t *testing.T) {
	e := newIDEnv(t)
	e.addApp(t)
	q := authorizeForm(map[string]string{"login": "", "password": "", "consent": ""})
	tests := []struct {
		name   string
		mod    map[string]string
		status int
		errStr string
	}{
		{"ok", nil, 200, ""},
		{"unknown client", map[string]string{"client_id": "nope"}, 400, "invalid_request"},
		{"unregistered redirect", map[string]string{"redirect_uri": "https://evil.example/cb"}, 400, "invalid_request"},
		// Refusals after the client and redirect_uri are checked go back
		// to the client: TestOAuthAuthorizeErrorsRedirect.
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := url.Values{}
			for k := range q {
				v.Set(k, q.Get(k))
			}
			for k, val := range tt.mod {
				v.Set(k, val)
			}
			resp, err := http.Get(e.srv.URL + "/ic/sso/api/v2/oauth/authorize?" + v.Encode())
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status || !strings.Contains(string(body), tt.errStr) {
				t.Fatalf("%d %s", resp.StatusCode, body)
			}
			if tt.status == 200 && (!strings.Contains(string(body), `name="password"`) || !strings.Contains(string(body), "Test partner")) {
				t.Fatalf("page %s", body)
			}
		})
	}
}

func TestOAuthLoginThrottle(t *testing.T) {
	e := newIDEnv(t)
	e.addApp(t)
	for i := 0; i < 5; i++ {
		if _, _, body := e.login(t, authorizeForm(map[string]string{"password": "wrong"})); !strings.Contains(body, "Неверный логин") {
			t.Fatalf("attempt %d: %s", i, body)
		}
	}
	// The right password is refused while the window lasts.
	if st, _, body := e.login(t, authorizeForm(nil)); st != 200 || !strings.Contains(body, "Слишком много") {
		t.Fatalf("throttled login: %d", st)
	}
	e.now = e.now.Add(15 * time.Minute)
	if st, loc, _ := e.login(t, authorizeForm(nil)); st != 302 || loc.Query().Get("code") == "" {
		t.Fatalf("after the window: %d %v", st, loc)
	}
}

func TestOAuthCodeFlow(t *testing.T) {
	e := newIDEnv(t)
	e.addApp(t)

	// Wrong password: the page again, no redirect.
	status, _, body := e.login(t, authorizeForm(map[string]string{"password": "wrong"}))
	if status != 200 || !strings.Contains(body, "Неверный логин или пароль") {
		t.Fatalf("wrong password: %d", status)
	}
	// Denied consent: back to the partner with access_denied.
	status, loc, _ := e.login(t, authorizeForm(map[string]string{"consent": "deny"}))
	if status != 302 || loc.Query().Get("error") != "access_denied" || loc.Query().Get("state") != "xyz" {
		t.Fatalf("deny: %d %v", status, loc)
	}

	status, loc, _ = e.login(t, authorizeForm(nil))
	code := loc.Query().Get("code")
	if status != 302 || code == "" || loc.Query().Get("state") != "xyz" || loc.Host != "partner.example" {
		t.Fatalf("login: %d %v", status, loc)
	}
	// Wrong verifier burns the code (one use).
	if st, m := e.tokenCall(t, "/ic/sso/api/v2/oauth/token", codeForm(code, strings.Repeat("a", 43))); st != 400 || m["error"] != "invalid_grant" {
		t.Fatalf("bad verifier: %d %v", st, m)
	}
	if st, m := e.tokenCall(t, "/ic/sso/api/v2/oauth/token", codeForm(code, oaVerifier)); st != 400 || m["error"] != "invalid_grant" {
		t.Fatalf("reused code: %d %v", st, m)
	}

	_, loc, _ = e.login(t, authorizeForm(nil))
	code = loc.Query().Get("code")
	bad := codeForm(code, oaVerifier)
	bad.Set("client_secret", "wrong")
	if st, m := e.tokenCall(t, "/ic/sso/api/v2/oauth/token", bad); st != 401 || m["error"] != "invalid_client" {
		t.Fatalf("bad secret: %d %v", st, m)
	}
	// The un-versioned path of the Node SDK works too.
	st, m := e.tokenCall(t, "/ic/sso/api/oauth/token", codeForm(code, oaVerifier))
	if st != 200 || m["token_type"] != "Bearer" || m["expires_in"] != float64(3600) || m["scope"] != "openid GET_CLIENT_ACCOUNTS" {
		t.Fatalf("exchange: %d %v", st, m)
	}
	access, refresh := m["access_token"].(string), m["refresh_token"].(string)
	if len(access) != 38 || !strings.HasSuffix(access, "-1") {
		t.Fatalf("token form %q", access)
	}
	if st, _ := e.get(t, "/fintech/api/v1/client-info", "Bearer "+access, nil); st != 200 {
		t.Fatalf("client-info with OAuth token: %d", st)
	}
	var ui banking.UserInfo
	if st, _ := e.get(t, "/ic/sso/api/v1/oauth/user-info", "Bearer "+access, &ui); st != 200 || ui.INN != banking.SandboxOrgINN || ui.Sub != banking.SandboxUserID || len(ui.Accounts) != 2 || ui.Aud != oaClient {
		t.Fatalf("user-info %d %+v", st, ui)
	}

	// Expired code.
	_, loc, _ = e.login(t, authorizeForm(nil))
	e.now = e.now.Add(banking.AuthCodeTTL)
	if st, m := e.tokenCall(t, "/ic/sso/api/v2/oauth/token", codeForm(loc.Query().Get("code"), oaVerifier)); st != 400 || m["error"] != "invalid_grant" {
		t.Fatalf("expired code: %d %v", st, m)
	}

	t.Run("refresh reserve", func(t *testing.T) {
		st, m := e.tokenCall(t, "/ic/sso/api/v2/oauth/token", refreshForm(refresh))
		if st != 200 || m["refresh_token"] == refresh {
			t.Fatalf("refresh: %d %v", st, m)
		}
		lost, used := m["refresh_token"].(string), e.now
		// The client lost the new pair: the old token works within 2 h, as
		// often as it is retried, and each retry's token replaces the one
		// before it (which kept working for 180 days before chains).
		var newest string
		for i := range 3 {
			e.now = e.now.Add(banking.RefreshReserve/4 - time.Minute)
			st, m := e.tokenCall(t, "/ic/sso/api/v2/oauth/token", refreshForm(refresh))
			if st != 200 {
				t.Fatalf("reserve retry %d: %d %v", i, st, m)
			}
			if newest != "" {
				lost = newest
			}
			newest = m["refresh_token"].(string)
			if st, m := e.tokenCall(t, "/ic/sso/api/v2/oauth/token", refreshForm(lost)); st != 400 || m["error"] != "invalid_grant" || m["error_description"] != "Unknown refresh token" {
				t.Fatalf("replaced token after retry %d: %d %v", i, st, m)
			}
		}
		e.now = used.Add(banking.RefreshReserve)
		if st, m := e.tokenCall(t, "/ic/sso/api/v2/oauth/token", refreshForm(refresh)); st != 400 || m["error_description"] != "Unknown refresh token" {
			t.Fatalf("after reserve: %d %v", st, m)
		}
		st, m = e.tokenCall(t, "/ic/sso/api/v2/oauth/token", refreshForm(newest))
		if st != 200 {
			t.Fatalf("newest: %d %v", st, m)
		}
		// Revoke the new access token: 401 afterwards; revoking an unknown token is fine.
		acc := m["access_token"].(string)
		rv := url.Values{"client_id": {oaClient}, "client_secret": {oaSecret}, "token": {acc}, "token_type_hint": {"access_token"}}
		if st, _ := e.tokenCall(t, "/ic/sso/api/v1/oauth/revoke", rv); st != 200 {
			t.Fatalf("revoke %d", st)
		}
		if st, _ := e.get(t, "/ic/sso/api/v2/oauth/user-info", acc, nil); st != 401 {
			t.Fatalf("revoked token: %d", st)
		}
		rv.Set("token", "unknown")
		if st, _ := e.tokenCall(t, "/ic/sso/api/v2/oauth/revoke", rv); st != 200 {
			t.Fatalf("revoke unknown %d", st)
		}
		rv.Set("client_secret", "wrong")
		if st, _ := e.tokenCall(t, "/ic/sso/api/v2/oauth/revoke", rv); st != 401 {
			t.Fatalf("revoke with wrong secret %d", st)
		}
		// Refresh tokens expire after 180 days.
		e.now = e.now.Add(banking.RefreshTokenTTL)
		if st, _ := e.tokenCall(t, "/ic/sso/api/v2/oauth/token", refreshForm(m["refresh_token"].(string))); st != 400 {
			t.Fatalf("expired refresh: %d", st)
		}
	})
	t.Run("id_token and user-info JWT", func(t *testing.T) {
		bankKey, err := banking.NewBankKey(e.now)
		if err != nil {
			t.Fatal(err)
		}
		signer := banking.NewIDTokenSigner("https://bank.test", bankKey)
		e.id.IDTokens = signer
		defer func() { e.id.IDTokens = nil }()
		cert := bankKey.Cert
		_, loc, _ := e.login(t, authorizeForm(map[string]string{"nonce": "n-123"}))
		st, m := e.tokenCall(t, "/ic/sso/api/v2/oauth/token", codeForm(loc.Query().Get("code"), oaVerifier))
		idt, _ := m["id_token"].(string)
		if st != 200 || idt == "" {
			t.Fatalf("exchange: %d %v", st, m)
		}
		jws, err := gost.ParseJWS(idt)
		if err != nil || jws.Verify(cert) != nil || jws.Header.Kid != signer.Kid || jws.Header.Typ != "JWT" {
			t.Fatalf("id_token does not verify or has no typ JWT: %v %+v", err, jws)
		}
		var claims map[string]any
		_ = json.Unmarshal(jws.Payload, &claims)
		if claims["nonce"] != "n-123" || claims["aud"] != oaClient || claims["sub"] != banking.SandboxUserID || claims["iss"] != "https://bank.test" {
			t.Fatalf("claims %v", claims)
		}
		if _, ok := claims["auth_time"].(float64); !ok {
			t.Fatalf("code's id_token without auth_time: %v", claims)
		}
		// A refresh answers the same shape, id_token included, with the
		// grant's iss, sub and aud and neither the login's nonce nor an
		// auth_time it does not know (OIDC Core §12.2).
		rst, rm := e.tokenCall(t, "/ic/sso/api/v2/oauth/token", refreshForm(m["refresh_token"].(string)))
		ridt, _ := rm["id_token"].(string)
		if rst != 200 || ridt == "" {
			t.Fatalf("refresh: %d %v", rst, rm)
		}
		rjws, err := gost.ParseJWS(ridt)
		if err != nil || rjws.Verify(cert) != nil || rjws.Header.Kid != signer.Kid {
			t.Fatalf("refreshed id_token does not verify: %v", err)
		}
		var rclaims map[string]any
		_ = json.Unmarshal(rjws.Payload, &rclaims)
		_, hasNonce := rclaims["nonce"]
		_, hasAuthTime := rclaims["auth_time"]
		if rclaims["aud"] != oaClient || rclaims["sub"] != banking.SandboxUserID || rclaims["iss"] != "https://bank.test" || hasNonce || hasAuthTime {
			t.Fatalf("refreshed id_token's claims %v", rclaims)
		}
		m["access_token"] = rm["access_token"]
		req, _ := http.NewRequest("GET", e.srv.URL+"/ic/sso/api/v2/oauth/user-info", nil)
		req.Header.Set("Authorization", "Bearer "+m["access_token"].(string))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		uj, err := gost.ParseJWS(string(body))
		if resp.Header.Get("Content-Type") != "application/jwt" || err != nil || uj.Verify(cert) != nil || uj.Header.Typ != "JWT" ||
			!strings.Contains(string(uj.Payload), banking.SandboxOrgINN) {
			t.Fatalf("user-info JWT: %s %v", body, err)
		}
	})
	t.Run("RS256 id_token and user-info JWT", func(t *testing.T) {
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		e.id.IDTokens = banking.NewRS256IDTokenSigner("https://bank.test", key)
		defer func() { e.id.IDTokens = nil }()
		verify := func(what, tok string) map[string]any {
			t.Helper()
			parts := strings.Split(tok, ".")
			if len(parts) != 3 {
				t.Fatalf("%s: %q", what, tok)
			}
			hdr, _ := base64.RawURLEncoding.DecodeString(parts[0])
			if string(hdr) != `{"typ":"JWT","alg":"RS256","kid":"`+banking.RSAKeyID(&key.PublicKey)+`"}` {
				t.Fatalf("%s header %s", what, hdr)
			}
			sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
			sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
			if err := rsa.VerifyPKCS1v15(&key.PublicKey, crypto.SHA256, sum[:], sig); err != nil {
				t.Fatalf("%s does not verify: %v", what, err)
			}
			var claims map[string]any
			raw, _ := base64.RawURLEncoding.DecodeString(parts[1])
			_ = json.Unmarshal(raw, &claims)
			return claims
		}
		_, loc, _ := e.login(t, authorizeForm(map[string]string{"nonce": "n-rs"}))
		st, m := e.tokenCall(t, "/ic/sso/api/v2/oauth/token", codeForm(loc.Query().Get("code"), oaVerifier))
		idt, _ := m["id_token"].(string)
		if st != 200 || idt == "" {
			t.Fatalf("exchange: %d %v", st, m)
		}
		if c := verify("id_token", idt); c["nonce"] != "n-rs" || c["aud"] != oaClient {
			t.Fatalf("claims %v", c)
		}
		req, _ := http.NewRequest("GET", e.srv.URL+"/ic/sso/api/v1/oauth/user-info", nil)
		req.Header.Set("Authorization", "Bearer "+m["access_token"].(string))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if c := verify("user-info", string(body)); c["inn"] != banking.SandboxOrgINN {
			t.Fatalf("user-info claims %v", c)
		}
	})
	if st, m := e.tokenCall(t, "/ic/sso/api/v2/oauth/token", url.Values{"grant_type": {"password"}, "client_id": {oaClient}, "client_secret": {oaSecret}}); st != 400 || m["error"] != "unsupported_grant_type" {
		t.Fatalf("password grant: %d %v", st, m)
	}
}
