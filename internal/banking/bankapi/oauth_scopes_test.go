package bankapi

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"partnerapi/internal/banking"
)

// TestOAuthAppScopes: an app registered for some scopes is refused any
// other at authorize, back at its redirect_uri with invalid_scope and the
// state (RFC 6749 §4.1.2.1) and without a code, from the page and from the
// form alike; an unregistered redirect_uri still gets no redirect; and a
// refresh keeps the scopes granted, whatever scope it names.
func TestOAuthAppScopes(t *testing.T) {
	e := newIDEnv(t)
	e.addApp(t)
	ctx := context.Background()
	if err := e.id.Store.SetAppScopes(ctx, oaClient, []string{"openid", banking.ScopeGetClientAccounts}); err != nil {
		t.Fatal(err)
	}
	wide := map[string]string{"scope": "openid " + banking.ScopePayDocRU}

	page := url.Values{}
	for k, vs := range authorizeForm(wide) {
		if k != "login" && k != "password" && k != "consent" {
			page[k] = vs
		}
	}
	resp, err := noRedirect().Get(e.srv.URL + "/ic/sso/api/v2/oauth/authorize?" + page.Encode())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || loc.Host != "partner.example" || loc.Query().Get("error") != "invalid_scope" ||
		loc.Query().Get("state") != "xyz" || !strings.Contains(loc.Query().Get("error_description"), banking.ScopePayDocRU) {
		t.Fatalf("page over the app's scopes: %d %v", resp.StatusCode, loc)
	}

	status, loc, _ := e.login(t, authorizeForm(wide))
	if status != http.StatusFound || loc.Query().Get("error") != "invalid_scope" || loc.Query().Get("code") != "" || loc.Query().Get("state") != "xyz" {
		t.Fatalf("form over the app's scopes: %d %v", status, loc)
	}

	// The redirect_uri is checked first: a stranger's gets the error here.
	stranger := authorizeForm(map[string]string{"scope": "openid " + banking.ScopePayDocRU, "redirect_uri": "https://evil.example/cb"})
	status, loc, body := e.login(t, stranger)
	if status != http.StatusBadRequest || loc.String() != "" || !strings.Contains(body, "invalid_request") {
		t.Fatalf("unregistered redirect_uri: %d %v %s", status, loc, body)
	}

	// Within the list the flow goes on, and a refresh asking for more
	// is refused (invalid_scope, TestOAuthRefreshScope) while one without
	// a scope gets exactly what was granted.
	status, loc, _ = e.login(t, authorizeForm(map[string]string{"scope": "openid"}))
	code := loc.Query().Get("code")
	if status != http.StatusFound || code == "" {
		t.Fatalf("within the app's scopes: %d %v", status, loc)
	}
	st, m := e.tokenCall(t, "/ic/sso/api/v2/oauth/token", codeForm(code, oaVerifier))
	if st != 200 || m["scope"] != "openid" {
		t.Fatalf("exchange: %d %v", st, m)
	}
	rf := refreshForm(m["refresh_token"].(string))
	rf.Set("scope", "openid "+banking.ScopePayDocRU+" "+banking.ScopeBusinessCardLimit)
	if st, m := e.tokenCall(t, "/ic/sso/api/v2/oauth/token", rf); st != 400 || m["error"] != "invalid_scope" {
		t.Fatalf("refresh asking for more: %d %v", st, m)
	}
	rf.Del("scope")
	st, m = e.tokenCall(t, "/ic/sso/api/v2/oauth/token", rf)
	if st != 200 || m["scope"] != "openid" {
		t.Fatalf("refresh: %d %v", st, m)
	}
	tok, err := e.id.Store.GetToken(ctx, banking.HashSecret(m["access_token"].(string)))
	if err != nil || strings.Join(tok.Scopes, " ") != "openid" {
		t.Fatalf("refreshed token %+v %v", tok, err)
	}

	// An unrestricted app (the list emptied) may ask for any scope again.
	if err := e.id.Store.SetAppScopes(ctx, oaClient, nil); err != nil {
		t.Fatal(err)
	}
	resp, err = noRedirect().Get(e.srv.URL + "/ic/sso/api/v2/oauth/authorize?" + page.Encode())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), banking.ScopePayDocRU) {
		t.Fatalf("unrestricted app: %d %s", resp.StatusCode, b)
	}
}
