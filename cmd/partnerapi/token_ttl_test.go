package main

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestBankingAccessTokenTTLServe: --banking-access-token-ttl is the life of
// an access token and of its id_token: the token answer's expires_in and
// the id_token's exp say it, and the token is refused once it has passed,
// when the refresh token still gets a new pair (what a team tests its
// client's refresh against without waiting the provider's hour).
func TestBankingAccessTokenTTLServe(t *testing.T) {
	ts := startServer(t, "--only", "banking", "--banking-access-token-ttl", "2s")
	app, refreshToken := newRefreshApp(t, ts, "TTL")
	refresh := func() map[string]any {
		t.Helper()
		st, m := app.refresh(refreshToken)
		if st != 200 {
			t.Fatalf("refresh: %d %v", st, m)
		}
		refreshToken = m["refresh_token"].(string)
		return m
	}
	userInfo := func(access string) int {
		t.Helper()
		req, _ := http.NewRequest("GET", ts.urls["banking"]+"/ic/sso/api/v2/oauth/user-info", nil)
		req.Header.Set("Authorization", "Bearer "+access)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	issued := time.Now()
	pair := refresh()
	if pair["expires_in"] != float64(2) {
		t.Fatalf("expires_in %v, want 2", pair["expires_in"])
	}
	idToken, _ := pair["id_token"].(string)
	parts := strings.Split(idToken, ".")
	if len(parts) != 3 {
		t.Fatalf("id_token %q", idToken)
	}
	claimsJSON, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var claims struct{ Iat, Exp int64 }
	if err := json.Unmarshal(claimsJSON, &claims); err != nil || claims.Exp-claims.Iat != 2 {
		t.Fatalf("id_token claims %s (%v), want exp 2 s after iat", claimsJSON, err)
	}
	access := pair["access_token"].(string)
	if st := userInfo(access); st != 200 && time.Since(issued) < 2*time.Second {
		t.Fatalf("user-info with the fresh token: %d", st)
	}
	// The server's read cache of tokens keeps a row up to a second.
	time.Sleep(time.Until(issued.Add(3200 * time.Millisecond)))
	if st := userInfo(access); st != 401 {
		t.Fatalf("user-info with a token past its 2 s: %d, want 401", st)
	}
	if st := userInfo(refresh()["access_token"].(string)); st != 200 {
		t.Fatalf("user-info with the refreshed token: %d", st)
	}
	// The CLI mints tokens outside serve, so it takes the lifetime too.
	if out := bankingCLI(t, "", "token", "--scope", "openid", "--client", app.id, "--access-token-ttl", "3s", "--data-dir", ts.dataDir); out["expires_in"] != float64(3) {
		t.Fatalf("banking token --access-token-ttl 3s: %v", out)
	}
	if out := bankingCLI(t, "", "token", "--scope", "openid", "--client", app.id, "--data-dir", ts.dataDir); out["expires_in"] != float64(3600) {
		t.Fatalf("banking token without --access-token-ttl: %v, want the provider's hour", out)
	}
}

// TestAssistantTokenTTLServe: --assistant-token-ttl is the life of a token
// from /api/v2/oauth: expires_at says it, and the API refuses the token
// with 401 once it has passed.
func TestAssistantTokenTTLServe(t *testing.T) {
	ts := startServer(t, "--only", "assistant", "--assistant-token-ttl", "2s")
	creds, err := createAssistantClient(t, ts.dataDir, "--scope", "ASSISTANT_API_CORP")
	if err != nil {
		t.Fatal(err)
	}
	form := url.Values{"scope": {"ASSISTANT_API_CORP"}}
	req, _ := http.NewRequest("POST", ts.urls["assistant"]+"/api/v2/oauth", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("RqUID", "72384bd5-0ca0-4cfd-9ac7-65d75258284c")
	req.Header.Set("Authorization", "Basic "+creds["authorization_key"])
	before := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
		ExpiresAt   int64  `json:"expires_at"`
	}
	err = json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("token: %d %v", resp.StatusCode, err)
	}
	if life := time.UnixMilli(tok.ExpiresAt).Sub(before); life < 1900*time.Millisecond || life > 2500*time.Millisecond {
		t.Fatalf("expires_at %d is %v after the request, want about 2 s", tok.ExpiresAt, life)
	}
	models := func() int {
		t.Helper()
		req, _ := http.NewRequest("GET", ts.urls["assistant"]+"/api/v1/models", nil)
		req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := models(); st != 200 && time.Since(before) < 2*time.Second {
		t.Fatalf("models with the fresh token: %d", st)
	}
	time.Sleep(time.Until(time.UnixMilli(tok.ExpiresAt).Add(1200 * time.Millisecond)))
	if st := models(); st != 401 {
		t.Fatalf("models with a token past its 2 s: %d, want 401", st)
	}
}

// TestTokenTTLFlagsRefuseBadValues: a lifetime that is not whole seconds
// from 1s to 24h stops serve at start, naming the flag.
func TestTokenTTLFlagsRefuseBadValues(t *testing.T) {
	for _, d := range []time.Duration{-time.Second, 500 * time.Millisecond, 1500 * time.Millisecond, 25 * time.Hour} {
		b := &bankingModule{accessTTL: d}
		if _, err := b.build(t.Context(), deps{}); err == nil || !strings.Contains(err.Error(), "--banking-access-token-ttl") {
			t.Errorf("banking build with %v: %v", d, err)
		}
		a := &assistantModule{tokenTTL: d}
		if _, err := a.build(t.Context(), deps{}); err == nil || !strings.Contains(err.Error(), "--assistant-token-ttl") {
			t.Errorf("assistant build with %v: %v", d, err)
		}
	}
	dir := t.TempDir()
	for _, v := range []string{"0s", "500ms", "25h"} {
		err := runBanking(t.Context(), []string{"token", "--scope", "openid", "--access-token-ttl", v, "--data-dir", dir},
			func(string) string { return "" }, stdio{in: strings.NewReader(""), out: io.Discard, err: io.Discard})
		if err == nil || !strings.Contains(err.Error(), "--access-token-ttl") {
			t.Errorf("banking token --access-token-ttl %s: %v", v, err)
		}
	}
}
