package main

import (
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"partnerapi/internal/storetest"
)

// outageReason is why a contract test leaves the database outage's 503s
// unprovoked: SQLite in a temporary directory cannot be taken down from
// outside, a PostgreSQL behind a pgProxy can.
const outageReason = "needs PostgreSQL (" + storetest.EnvPostgres + ") to take a database down"

// outageDatabase is a scratch PostgreSQL database reached through a
// pgProxy, for the "database down" cases of the contract tests: the
// server and the CLI that makes its fixtures use dbURL while the proxy is
// up, then the test takes the proxy down and every query of the server
// meets a cut connection or a refused one (connect_timeout bounds a hung
// connect). ok is false when no PostgreSQL is configured.
func outageDatabase(t *testing.T, what string) (dbURL string, proxy *pgProxy, ok bool) {
	t.Helper()
	if os.Getenv(storetest.EnvPostgres) == "" {
		return "", nil, false
	}
	raw, _ := scratchPostgres(t, what)
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	proxy = newPGProxy(t, u.Host)
	u.Host = proxy.addr
	q := u.Query()
	q.Set("connect_timeout", "5")
	u.RawQuery = q.Encode()
	return u.String(), proxy, true
}

// checkOutage holds a database-down answer to what the contracts promise
// beyond the schema: 503 with a Retry-After in whole seconds. /healthz is
// the probe's, which says unavailable and has no retry to time.
func checkOutage(t *testing.T, resp *http.Response, raw []byte) {
	t.Helper()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Request.URL.Path == "/healthz" {
		return
	}
	if ra := resp.Header.Get("Retry-After"); ra == "" || strings.Trim(ra, "0123456789") != "" {
		t.Errorf("503 with Retry-After %q: %.300s", ra, raw)
	}
}

// unprovokedOutage puts the 503 of each operation the "database down"
// cases would have covered (ops) on unprovoked, unless another case
// provoked it; a 503 already there for another cause gets both reasons.
// With PostgreSQL, drop deletes the entries of ops instead, since the
// cases provoke their 503s.
func unprovokedOutage(unprovoked map[string]string, seen map[string]map[string]bool, ops []string, drop bool) {
	for _, op := range ops {
		switch key := op + " 503"; {
		case drop:
			delete(unprovoked, key)
		case seen[op]["503"]:
		case unprovoked[key] != "":
			unprovoked[key] += "; " + outageReason
		default:
			unprovoked[key] = outageReason
		}
	}
}
