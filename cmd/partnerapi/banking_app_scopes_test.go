package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"partnerapi/internal/banking"
)

// runCLI runs the whole command line through run, as the binary would,
// and returns its JSON answer and error.
func runCLI(t *testing.T, args ...string) (map[string]any, error) {
	t.Helper()
	var out bytes.Buffer
	err := run(context.Background(), args, func(string) string { return "" }, stdio{in: strings.NewReader(""), out: &out, err: io.Discard})
	var m map[string]any
	if err == nil {
		if jerr := json.Unmarshal(out.Bytes(), &m); jerr != nil {
			t.Fatalf("%v: %v: %s", args, jerr, out.String())
		}
	}
	return m, err
}

// TestBankingAppScopesCLI: `banking app create --scopes` registers an app
// for those scopes and without the flag for all of them; `banking app
// scopes` changes the list; serve's authorize then refuses a scope outside
// it with a redirect carrying invalid_scope, and `banking token` refuses
// it too.
func TestBankingAppScopesCLI(t *testing.T) {
	// Provisioning runs beside serve, which reads the app on every request.
	ts := startServer(t, "--only", "banking")
	dir := ts.dataDir
	open, err := runCLI(t, "banking", "app", "create", "--name", "Open", "--redirect-uri", "https://open.example/cb", "--data-dir", dir)
	if err != nil || open["scopes"] != "all" {
		t.Fatalf("app without --scopes: %v %v", open, err)
	}
	app, err := runCLI(t, "banking", "app", "create", "--name", "Narrow", "--redirect-uri", "https://narrow.example/cb",
		"--scopes", "openid  GET_CLIENT_ACCOUNTS openid", "--data-dir", dir)
	if err != nil || app["scopes"] != "openid GET_CLIENT_ACCOUNTS" {
		t.Fatalf("app with --scopes: %v %v", app, err)
	}
	id := app["client_id"].(string)
	if _, err := runCLI(t, "banking", "token", "--scope", "openid PAY_DOC_RU", "--client", id, "--data-dir", dir); err == nil ||
		!strings.Contains(err.Error(), "PAY_DOC_RU") {
		t.Fatalf("token outside the app's scopes: %v", err)
	}
	if _, err := runCLI(t, "banking", "token", "--scope", "openid", "--client", id, "--data-dir", dir); err != nil {
		t.Fatalf("token within the app's scopes: %v", err)
	}
	if _, err := runCLI(t, "banking", "app", "scopes", "--client", "nope", "--scopes", "openid", "--data-dir", dir); err == nil ||
		!strings.Contains(err.Error(), "--client nope") {
		t.Fatalf("scopes of an unknown app: %v", err)
	}
	if _, err := runCLI(t, "banking", "app", "scopes", "--scopes", "openid", "--data-dir", dir); err == nil || !strings.Contains(err.Error(), "--client") {
		t.Fatalf("scopes without --client: %v", err)
	}
	got, err := runCLI(t, "banking", "app", "scopes", "--client", id, "--scopes", "openid PAY_DOC_RU", "--data-dir", dir)
	if err != nil || got["scopes"] != "openid PAY_DOC_RU" {
		t.Fatalf("app scopes: %v %v", got, err)
	}

	authorize := func(scope string) (int, url.Values) {
		t.Helper()
		q := url.Values{"response_type": {"code"}, "client_id": {id}, "redirect_uri": {"https://narrow.example/cb"}, "scope": {scope}, "state": {"st"}}
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := client.Get(ts.urls["banking"] + "/ic/sso/api/v2/oauth/authorize?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		loc, _ := url.Parse(resp.Header.Get("Location"))
		return resp.StatusCode, loc.Query()
	}
	if st, _ := authorize("openid PAY_DOC_RU"); st != http.StatusOK {
		t.Fatalf("within the changed list: %d", st)
	}
	if st, q := authorize("openid " + banking.ScopeGetClientAccounts); st != http.StatusFound || q.Get("error") != "invalid_scope" || q.Get("state") != "st" {
		t.Fatalf("outside the changed list: %d %v", st, q)
	}
	// An empty list lifts the restriction again.
	if got, err := runCLI(t, "banking", "app", "scopes", "--client", id, "--scopes", "", "--data-dir", dir); err != nil || got["scopes"] != "all" {
		t.Fatalf("clearing scopes: %v %v", got, err)
	}
	if st, _ := authorize("openid " + banking.ScopeBusinessCardLimit); st != http.StatusOK {
		t.Fatalf("unrestricted again: %d", st)
	}
}
