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
	"time"
)

// secretChangeApp makes an app on the server whose data directory is
// dataDir, with an access token of its own: the form of a valid
// change-client-secret request. The contract table changes this app's
// secret rather than the sandbox app's, which its other rows use.
func secretChangeApp(t *testing.T, dataDir string, extra ...string) url.Values {
	t.Helper()
	app := bankingCLI(t, "", append([]string{"app", "create", "--name", "Secret changer", "--redirect-uri", "https://partner.example/cb",
		"--data-dir", dataDir}, extra...)...)
	id := app["client_id"].(string)
	tok := bankingCLI(t, "", "token", "--scope", "openid", "--client", id, "--data-dir", dataDir)
	return url.Values{"access_token": {tok["access_token"].(string)}, "client_id": {id},
		"client_secret": {app["client_secret"].(string)}, "new_client_secret": {strings.Repeat("N3w_-", 8)}}
}

// changeForm is f's secret-change app's request with set over it.
func (f *bankFixture) changeForm(set url.Values) string {
	v := url.Values{}
	for k, vs := range f.changeApp {
		v[k] = vs
	}
	for k, vs := range set {
		v[k] = vs
	}
	return v.Encode()
}

// TestBankingClientSecretDaysCLI: app create and app secret print when the
// secret they set expires, 40 days on by default, never with
// --banking-client-secret-days 0 (flag or environment), and refuse a
// negative count.
func TestBankingClientSecretDaysCLI(t *testing.T) {
	dir := t.TempDir()
	before := time.Now()
	app := bankingCLI(t, "", "app", "create", "--name", "A", "--redirect-uri", "https://a.example/cb", "--data-dir", dir)
	exp, err := time.Parse(time.RFC3339, app["client_secret_expires_at"].(string))
	if err != nil || exp.Before(before.Add(40*24*time.Hour).Truncate(time.Second)) || exp.After(time.Now().Add(40*24*time.Hour)) {
		t.Fatalf("default expiry %v %v", app["client_secret_expires_at"], err)
	}
	id := app["client_id"].(string)
	if got := bankingCLI(t, "", "app", "secret", "--client", id, "--banking-client-secret-days", "0", "--data-dir", dir); got["client_secret_expires_at"] != "never" {
		t.Fatalf("0 days: %v", got)
	}
	var out bytes.Buffer
	env := func(k string) string {
		if k == "PARTNERAPI_BANKING_CLIENT_SECRET_DAYS" {
			return "0"
		}
		return ""
	}
	if err := runBanking(context.Background(), []string{"app", "create", "--name", "B", "--data-dir", dir}, env,
		stdio{in: strings.NewReader(""), out: &out, err: io.Discard}); err != nil || !strings.Contains(out.String(), `"client_secret_expires_at":"never"`) {
		t.Fatalf("environment 0 days: %v %s", err, out.String())
	}
	err = runBanking(context.Background(), []string{"app", "secret", "--client", id, "--banking-client-secret-days", "-1", "--data-dir", dir},
		func(string) string { return "" }, stdio{in: strings.NewReader(""), out: io.Discard, err: io.Discard})
	if err == nil || !strings.Contains(err.Error(), "--banking-client-secret-days") {
		t.Fatalf("negative days: %v", err)
	}
}

// TestBankingClientSecretDaysServe: serve's --banking-client-secret-days is
// the lifetime change-client-secret gives the new secret, and the days it
// answers.
func TestBankingClientSecretDaysServe(t *testing.T) {
	ts := startServer(t, "--only", "banking", "--banking-client-secret-days", "7")
	form := secretChangeApp(t, ts.dataDir)
	resp, err := http.PostForm(ts.urls["banking"]+"/ic/sso/api/v1/change-client-secret", form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != 200 || body["clientSecretExpiration"] != float64(7) {
		t.Fatalf("%d %v %v", resp.StatusCode, body, err)
	}
	// Neither secret reaches the log.
	for _, k := range []string{"client_secret", "new_client_secret", "access_token"} {
		if strings.Contains(ts.logs.String(), form.Get(k)) {
			t.Fatalf("the log holds the %s", k)
		}
	}
}
