package main

import (
	"net/url"
	"strings"
	"testing"

	"partnerapi/internal/banking"
)

// startOutageBank starts the fixture's "down" server on PostgreSQL behind
// a pgProxy, issues its tokens (scopes, as "down …" Authorization values)
// and reads the sandbox app's secret while the proxy is up, then takes the
// proxy down: from then on every query of the server fails as on a
// stopped PostgreSQL. Without PostgreSQL the fixture has no down server.
func (f *bankFixture) startOutageBank(t *testing.T, scopes map[string]string) {
	t.Helper()
	dbURL, proxy, ok := outageDatabase(t, "bankdown")
	if !ok {
		return
	}
	ts := startServer(t, "--only", "banking", "--database-url", dbURL)
	f.base["down"] = ts.urls["banking"]
	st := []string{"--data-dir", ts.dataDir, "--database-url", dbURL}
	for key, scope := range scopes {
		f.auth["down "+key] = "Bearer " + bankingCLI(t, "", append([]string{"token", "--scope", scope}, st...)...)["access_token"].(string)
	}
	f.downSecret = bankingCLI(t, "", append([]string{"app", "secret"}, st...)...)["client_secret"].(string)
	// The tokens were issued by the CLI and never used, so no cache of
	// the server's knows them: each case's token check asks the database.
	proxy.down()
}

// outageCases has one row per operation of api/banking.yaml that reads
// the store, sent to the down server: each is 503
// UNAVAILABLE_RESOURCE_EXCEPTION with a Retry-After, the OAuth endpoints
// too (their own error format is for refusals, not for an outage); and
// /healthz, whose probe says unavailable.
func (f *bankFixture) outageCases() []bankCase {
	rows := operationRows()
	openid := strings.TrimPrefix(f.auth["down openid"], "Bearer ")
	client := func(v url.Values) string {
		v.Set("client_id", banking.SandboxClientID)
		v.Set("client_secret", f.downSecret)
		return v.Encode()
	}
	authorize := url.Values{"response_type": {"code"}, "client_id": {banking.SandboxClientID}, "redirect_uri": {banking.SandboxRedirectURI},
		"scope": {"openid GET_CLIENT_ACCOUNTS"}, "state": {"s1"}}
	const sso = "/ic/sso/api"
	refresh := client(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"00000000-0000-4000-8000-000000000000"}})
	revoke := client(url.Values{"token": {openid}})
	rows = append(rows,
		bankCase{name: "health", method: "GET", path: "/healthz"},
		bankCase{name: "authorize page", method: "GET", path: sso + "/v2/oauth/authorize?" + authorize.Encode()},
		bankCase{name: "authorize submit", method: "POST", path: sso + "/v2/oauth/authorize", body: authorizeForm(nil)},
		bankCase{name: "sbbid v1 authorize page", method: "GET", path: "/ic/sbbid/api/v1/oauth/authorize?" + authorize.Encode()},
		bankCase{name: "sbbid v1 authorize submit", method: "POST", path: "/ic/sbbid/api/v1/oauth/authorize", body: authorizeForm(nil)},
		bankCase{name: "sbbid v2 authorize page", method: "GET", path: "/ic/sbbid/api/v2/oauth/authorize?" + authorize.Encode()},
		bankCase{name: "sbbid v2 authorize submit", method: "POST", path: "/ic/sbbid/api/v2/oauth/authorize", body: authorizeForm(nil)},
		bankCase{name: "token", method: "POST", path: sso + "/v2/oauth/token", body: refresh},
		bankCase{name: "token v1", method: "POST", path: sso + "/v1/oauth/token", body: refresh},
		bankCase{name: "token legacy path", method: "POST", path: sso + "/oauth/token", body: refresh},
		bankCase{name: "revoke", method: "POST", path: sso + "/v1/oauth/revoke", body: revoke},
		bankCase{name: "revoke v2", method: "POST", path: sso + "/v2/oauth/revoke", body: revoke},
		bankCase{name: "user-info", method: "GET", path: sso + "/v1/oauth/user-info", auth: "openid"},
		bankCase{name: "user-info v2", method: "GET", path: sso + "/v2/oauth/user-info", auth: "openid"},
		bankCase{name: "change-client-secret", method: "POST", path: sso + "/v1/change-client-secret",
			body: client(url.Values{"access_token": {openid}, "new_client_secret": {strings.Repeat("N3w_-", 8)}})},
	)
	for i := range rows {
		rows[i].server = "down"
		if rows[i].auth != "" {
			rows[i].auth = "down " + rows[i].auth
		}
		rows[i].status = 503
		if rows[i].path != "/healthz" {
			rows[i].cause = "UNAVAILABLE_RESOURCE_EXCEPTION"
		}
	}
	return rows
}

// outageOps are the operations outageCases covers, for the unprovoked
// list of a run without PostgreSQL.
func (c *contractSpec) outageOps(cases []bankCase) []string {
	var ops []string
	for _, tc := range cases {
		ops = append(ops, c.operationOf(tc.method, strings.SplitN(tc.path, "?", 2)[0]))
	}
	return ops
}
