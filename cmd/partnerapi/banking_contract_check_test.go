package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"partnerapi/internal/testenv"
	"strconv"
	"strings"
	"testing"

	verrors "github.com/pb33f/libopenapi-validator/errors"

	"partnerapi/internal/banking"
)

// bankCase is one request of the banking contract's table and what the
// server and the contract must say about it.
type bankCase struct {
	name string
	// server names the fixture's server; "" is the main one.
	server string
	method string
	path   string
	auth   string // a key of the fixture's Authorization values; "" sends none
	ctype  string // the request's Content-Type; "" is JSON for a body, form for /ic/sso and /ic/sbbid
	accept string // the request's Accept; "" is application/json
	body   string
	status int
	// cause is the error envelope's cause the answer must carry.
	cause string
	// badRequest says the contract itself refuses the request (a missing
	// token, a body its schema rejects): a generated client would not
	// send it, and the server must refuse it too. Both are checked: the
	// contract must refuse a badRequest row and take every other one, and
	// the server must answer a badRequest row with a 4xx or 5xx.
	badRequest bool
	// warm sends the request once, unchecked, before the row: the limited
	// server's burst is one request per token and operation, so the row
	// itself is over the limit.
	warm bool
}

// bankFixture is the three sandbox servers the table needs and the
// Authorization values it names. Each server has its own store, so a
// token belongs to one server: "limited …" and "maint …" values are the
// limited and maintenance servers' tokens.
type bankFixture struct {
	base   map[string]string
	auth   map[string]string
	secret string // the sandbox app's client_secret on the main server
	// changeApp is a valid change-client-secret form of another app of the
	// main server's (banking_client_secret_test.go).
	changeApp url.Values
	// brokenLogs is the log of the server whose store breakBankingStore
	// broke, where each 500's referenceId must lead to its cause.
	brokenLogs *testenv.LogBuffer
	// downSecret is the sandbox app's client_secret on the "down" server,
	// whose database is taken down once its fixtures are made
	// (startOutageBank); there is no such server without PostgreSQL.
	downSecret string
	client     *http.Client
}

func newBankFixture(t *testing.T) *bankFixture {
	t.Helper()
	servers := map[string]*testServer{
		// Partner webhook URLs on loopback are let through, so the table
		// can set one without a resolver. Its rate is unlimited: the table
		// sends more creates on one token than the default burst of 20,
		// and the 429 rows have the "limited" server for themselves.
		"": startServer(t, "--only", "banking", "--banking-webhook-allow-private", "--banking-payment-rate", "0"),
		// A burst of one payment operation per token and operation makes
		// every operation's second request 429; the sandbox partner must
		// sign its card-limit requests here, which makes plain JSON 415.
		"limited": startServer(t, "--only", "banking", "--banking-payment-rate", "0.001", "--banking-payment-burst", "1",
			"--banking-jws-required-clients", banking.SandboxClientID),
		"maint": startServer(t, "--only", "banking", "--banking-maintenance"),
		// Its store loses the operations' tables once the tokens are
		// issued (breakBankingStore), for the 500 of every operation.
		"broken": startServer(t, "--only", "banking", "--banking-webhook-allow-private"),
	}
	f := &bankFixture{base: map[string]string{}, auth: map[string]string{"bad": "Bearer 00000000-0000-4000-8000-000000000000-1"},
		client: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	scopes := map[string]string{
		"pay": banking.ScopePayDocRU, "invoice": banking.ScopePayDocRUInvoice, "invoice any": banking.ScopePayDocRUInvoiceAny,
		"invoice budget": banking.ScopePayDocRUInvoiceBudget, "cards": banking.ScopeBusinessCardLimit,
		"accounts": banking.ScopeGetClientAccounts, "crypto": banking.ScopeGetCryptoInfo, "eio": banking.ScopeGetCryptoInfoEIO,
		"openid": banking.ScopeOpenID,
	}
	for name, ts := range servers {
		f.base[name] = ts.urls["banking"]
		prefix := ""
		if name != "" {
			prefix = name + " "
		}
		for key, scope := range scopes {
			tok := bankingToken(t, ts, scope)
			f.auth[prefix+key] = "Bearer " + tok
			if name == "" && key == "pay" {
				// Reference §1: the payment examples send the bare token.
				f.auth["pay bare"] = tok
			}
		}
	}
	f.secret = bankingCLI(t, "", "app", "secret", "--data-dir", servers[""].dataDir)["client_secret"].(string)
	// Registered for openid alone, so a request for more provokes the
	// authorize page's invalid_scope redirect.
	f.changeApp = secretChangeApp(t, servers[""].dataDir, "--scopes", "openid")
	// The same apps' credentials as client_secret_basic (RFC 6749
	// §2.3.1), for the OAuth rows that authenticate with the
	// Authorization header instead of the form.
	f.auth["client basic"] = clientBasic(banking.SandboxClientID, f.secret)
	f.auth["change app basic wrong secret"] = clientBasic(f.changeApp.Get("client_id"), "not-the-secret")
	breakBankingStore(t, servers["broken"].dataDir)
	f.startOutageBank(t, scopes)
	f.brokenLogs = servers["broken"].logs
	return f
}

// authorizeForm is the login and consent form of the sandbox app and
// user, with set over the defaults.
func authorizeForm(set url.Values) string {
	v := url.Values{"response_type": {"code"}, "client_id": {banking.SandboxClientID}, "redirect_uri": {banking.SandboxRedirectURI},
		"scope": {"openid GET_CLIENT_ACCOUNTS"}, "state": {"s1"}, "login": {banking.SandboxUserLogin},
		"password": {banking.SandboxUserPassword}, "consent": {"allow"}}
	for k, vs := range set {
		v[k] = vs
	}
	return v.Encode()
}

// overLimit pads a valid body to one byte over the platform's 1 MiB body
// limit: JSON with trailing whitespace, a form with one more field. The
// declared length alone gets the 413, before the operation runs.
func overLimit(body string) string {
	const limit = 1 << 20
	if strings.HasPrefix(body, "{") {
		return body + strings.Repeat(" ", limit+1-len(body))
	}
	const pad = "&pad="
	return body + pad + strings.Repeat("x", limit+1-len(body)-len(pad))
}

// code signs the sandbox user in and returns a fresh authorization code.
func (f *bankFixture) code(t *testing.T) string {
	t.Helper()
	resp, err := f.client.Post(f.base[""]+"/ic/sso/api/v2/oauth/authorize", "application/x-www-form-urlencoded", strings.NewReader(authorizeForm(nil)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || loc.Query().Get("code") == "" {
		t.Fatalf("authorize %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	return loc.Query().Get("code")
}

// clientBasic is the Authorization value of client_secret_basic: each
// half form-urlencoded before Base64, as RFC 6749 §2.3.1 asks.
func clientBasic(clientID, secret string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(clientID)+":"+url.QueryEscape(secret)))
}

// tokenForm is the token endpoint's form for the sandbox app.
func (f *bankFixture) tokenForm(v url.Values) string {
	v.Set("client_id", banking.SandboxClientID)
	if v.Get("client_secret") == "" {
		v.Set("client_secret", f.secret)
	}
	return v.Encode()
}

// refreshToken runs the code grant and returns the pair's refresh token.
func (f *bankFixture) refreshToken(t *testing.T) string {
	t.Helper()
	resp, err := f.client.Post(f.base[""]+"/ic/sso/api/v2/oauth/token", "application/x-www-form-urlencoded", strings.NewReader(f.tokenForm(url.Values{
		"grant_type": {"authorization_code"}, "code": {f.code(t)}, "redirect_uri": {banking.SandboxRedirectURI}})))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var pair banking.TokenPair
	if err := json.NewDecoder(resp.Body).Decode(&pair); err != nil || pair.RefreshToken == "" {
		t.Fatalf("token %d %v %+v", resp.StatusCode, err, pair)
	}
	return pair.RefreshToken
}

// request builds the case's request; it is built once for the server and
// once for each validator, which read the body.
func (f *bankFixture) request(tc bankCase) *http.Request {
	base, ok := f.base[tc.server]
	if !ok {
		panic("no server named " + tc.server)
	}
	var body io.Reader
	if tc.body != "" || tc.method == "POST" || tc.method == "PUT" {
		body = strings.NewReader(tc.body)
	}
	req, _ := http.NewRequestWithContext(context.Background(), tc.method, base+tc.path, body)
	if body != nil {
		ctype := tc.ctype
		switch {
		case ctype != "":
		case strings.HasPrefix(tc.path, "/ic/sso/"), strings.HasPrefix(tc.path, "/ic/sbbid/"):
			ctype = "application/x-www-form-urlencoded"
		default:
			ctype = "application/json"
		}
		req.Header.Set("Content-Type", ctype)
	}
	req.Header.Set("Accept", "application/json")
	if tc.accept != "" {
		req.Header.Set("Accept", tc.accept)
	}
	if tc.auth != "" {
		a, ok := f.auth[tc.auth]
		if !ok {
			panic("no Authorization value named " + tc.auth)
		}
		req.Header.Set("Authorization", a)
	}
	return req
}

// exchange sends one case and validates the request and the response
// against the contract, returning the status and the body.
func (f *bankFixture) exchange(t *testing.T, c *contractSpec, tc bankCase) (int, []byte) {
	t.Helper()
	c.checkRequest(t, f.request(tc), tc.badRequest)
	resp, raw := sendRecorded(t, f.client, f.request(tc))
	if tc.accept == "application/jose" {
		// A signed compact JWS cannot be checked against the JSON schema;
		// its content type is what a client dispatches on.
		if ct := resp.Header.Get("Content-Type"); resp.StatusCode < 300 && !strings.HasPrefix(ct, "application/jose") {
			t.Errorf("%d answered Accept: application/jose with Content-Type %q", resp.StatusCode, ct)
		}
	} else if ok, errs := c.responses.ValidateHttpResponse(f.request(tc), resp); !ok {
		t.Errorf("%d %.300s\nthe response breaks the contract:%s", resp.StatusCode, raw, describe(errs))
	}
	// The platform gives every answer of the API an X-Request-Id, which an
	// error's referenceId lets a partner quote.
	if !strings.HasPrefix(tc.path, "/healthz") && !strings.HasPrefix(tc.path, "/metrics") && !strings.HasPrefix(tc.path, "/openapi") &&
		resp.Header.Get("X-Request-Id") == "" {
		t.Errorf("%d response without X-Request-Id", resp.StatusCode)
	}
	if tc.server == "down" {
		checkOutage(t, resp, raw)
	}
	if tc.cause != "" {
		var e struct{ Cause string }
		if json.Unmarshal(raw, &e); e.Cause != tc.cause {
			t.Errorf("cause %q, want %s: %.300s", e.Cause, tc.cause, raw)
		}
	}
	if tc.server == "broken" && resp.StatusCode == http.StatusInternalServerError {
		// The answer never carries the cause; its referenceId leads to
		// the log line that does.
		var e struct{ ReferenceID, Message string }
		_ = json.Unmarshal(raw, &e)
		line := logLineWith(f.brokenLogs.String(), "referenceId="+e.ReferenceID)
		if e.ReferenceID == "" || !strings.Contains(line, "level=ERROR") || !strings.Contains(line, "no such table") {
			t.Errorf("referenceId %q: log line %q, want the error with its cause", e.ReferenceID, line)
		}
		if strings.Contains(e.Message, "table") {
			t.Errorf("the 500 tells the cause: %s", raw)
		}
	}
	return resp.StatusCode, raw
}

// withoutDecodedReserved drops the validator's complaint that a form
// value holds reserved characters: libopenapi-validator v0.16 looks for
// them in the decoded value, so the percent-encoded redirect_uri every
// client sends (url.Values.Encode, RFC 6749 §4.1.3) trips it. It reports
// whether anything else is left.
func withoutDecodedReserved(errs []*verrors.ValidationError) (bool, []*verrors.ValidationError) {
	var left []*verrors.ValidationError
	for _, e := range errs {
		if !strings.HasPrefix(e.Message, "Form value") || !strings.Contains(e.Message, "contains reserved characters") {
			left = append(left, e)
		}
	}
	return len(left) == 0, left
}

// runBankCases runs a table: each row's status must be the row's, and
// seen records the statuses each operation answered, for the coverage
// check at the end of TestBankingContract.
func (f *bankFixture) runBankCases(t *testing.T, c *contractSpec, seen map[string]map[string]bool, cases []bankCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.warm {
				resp, err := f.client.Do(f.request(tc))
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
			}
			got, raw := f.exchange(t, c, tc)
			if got != tc.status {
				t.Errorf("status %d, want %d: %.300s", got, tc.status, raw)
			}
			// checkRequest holds the contract to the row's badRequest both
			// ways; this holds the server to it, so that a row cannot mark
			// as refused a request the server takes, which would hide a
			// contract stricter than the server.
			if tc.badRequest && got < 400 {
				t.Errorf("the server takes (%d) a request the row says the contract refuses: %.300s", got, raw)
			}
			op := c.operationOf(tc.method, strings.SplitN(tc.path, "?", 2)[0])
			if seen[op] == nil {
				seen[op] = map[string]bool{}
			}
			seen[op][strconv.Itoa(got)] = true
		})
	}
}

// logLineWith is the first line of logs that contains s, or "".
func logLineWith(logs, s string) string {
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, s) {
			return line
		}
	}
	return ""
}
