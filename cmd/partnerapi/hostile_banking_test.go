package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"partnerapi/internal/banking"
)

// bankHostileScopes names the scopes that grant each secured banking
// operation (reference §2). The sweep's unscoped credential holds none of
// them; an operation missing here fails the sweep, so a new route is given
// its scopes when it is added.
var bankHostileScopes = func() map[string][]string {
	anyPay := []string{banking.ScopePayDocRU, banking.ScopePayDocRUInvoice, banking.ScopePayDocRUInvoiceAny, banking.ScopePayDocRUInvoiceBudget}
	cards := []string{banking.ScopeBusinessCardLimit}
	const pays = "/fintech/api/v1/payments"
	m := map[string][]string{
		"GET /fintech/api/v1/client-info":                              {banking.ScopeGetClientAccounts},
		"GET /fintech/api/v1/crypto":                                   {banking.ScopeGetCryptoInfo},
		"GET /fintech/api/v1/crypto/eio":                               {banking.ScopeGetCryptoInfoEIO},
		"POST " + pays:                                                 {banking.ScopePayDocRU},
		"POST " + pays + "/from-invoice":                               {banking.ScopePayDocRUInvoice},
		"POST " + pays + "/from-invoice-any":                           {banking.ScopePayDocRUInvoiceAny},
		"POST " + pays + "/from-invoice-budget":                        {banking.ScopePayDocRUInvoiceBudget},
		"POST " + pays + "/qr-confirmation":                            {banking.ScopePayDocRU},
		"GET " + pays + "/{externalId}":                                {banking.ScopePayDocRU},
		"GET " + pays + "/{externalId}/state":                          anyPay,
		"GET " + pays + "/{externalId}/digest":                         anyPay,
		"GET " + pays + "/{externalId}/history":                        anyPay,
		"GET " + pays + "/{externalId}/requisites-qr":                  anyPay,
		"POST " + pays + "/{externalId}/sign":                          {banking.ScopePayDocRU},
		"PUT /fintech/api/v1/webhook":                                  anyPay,
		"GET /fintech/api/v1/webhook":                                  anyPay,
		"DELETE /fintech/api/v1/webhook":                               anyPay,
		"GET /fintech/api/v1/webhook/deliveries":                       anyPay,
		"GET /fintech/api/v1/business-cards":                           cards,
		"POST /fintech/api/v1/business-cards":                          cards,
		"POST /fintech/api/v1/business-cards/limits":                   cards,
		"GET /fintech/api/v1/business-cards/limits/{externalId}/state": cards,
		"POST /fintech/api/v1/business-cards/limits/{externalId}/sign": cards,
		"POST /fintech/api/sandbox/clock":                              cards,
		"POST /fintech/api/sandbox/payments/{externalId}/delete":       {banking.ScopePayDocRU},
		"POST /fintech/api/sandbox/payments/{externalId}/edit":         anyPay, // then the document kind's scope
		"GET /ic/sso/api/v1/oauth/user-info":                           {banking.ScopeOpenID},
		"GET /ic/sso/api/v2/oauth/user-info":                           {banking.ScopeOpenID},
	}
	for _, op := range certRequestOps() {
		m[op] = []string{banking.ScopeGetCryptoInfo, banking.ScopeGetCryptoInfoEIO}
	}
	return m
}()

// certRequestOps are the certificate-request operations of the contract
// (reference §10), under each path the SDKs use.
func certRequestOps() []string {
	var ops []string
	for _, v := range []string{certReqV1, certReqV2} {
		ops = append(ops, "POST "+v, "POST "+v+"/eio", "GET "+v+"/{externalId}/print")
	}
	for _, b := range []string{certReqV1, certReqV1 + "/eio"} {
		ops = append(ops, "GET "+b+"/{externalId}/state", "POST "+b+"/{externalId}/activate")
	}
	return append(ops, "GET "+certReqV1+"/eio/{externalId}/print")
}

// certRequest creates a certificate request of the sandbox organisation.
func (b *bankHostile) certRequest(t *testing.T) string {
	t.Helper()
	id := b.id()
	if status, raw := b.call(t, "POST", certReqV1, b.tokens[banking.ScopeGetCryptoInfo], certReqBody(id, nil)); status != http.StatusCreated {
		t.Fatalf("certificate request: %d %s", status, raw)
	}
	return id
}

// certRequestStatus is the bankStatus of a certificate request as auth
// reads it.
func (b *bankHostile) certRequestStatus(t *testing.T, id, auth string) string {
	t.Helper()
	status, raw := b.call(t, "GET", certReqV1+"/"+id+"/state", auth, "")
	st, err := certRequestStateOf(raw)
	if status != http.StatusOK || err != nil {
		t.Fatalf("state of certificate request %s: %d %s", id, status, raw)
	}
	return st.BankStatus
}

// The second partner: an organisation of its own with an account, a user,
// an app and an offer, whose documents the sweep's credentials (the
// sandbox organisation's) must not reach.
const (
	otherINN, otherKPP, otherOGRN = "7707083893", "773601001", "1027700132195"
	otherAccount, otherBIC        = "40702810438000000077", "044525225"
	otherCorr                     = "30101810400000000225"
	otherMarker                   = "Тайна второго партнёра 7f3a"
)

type bankHostile struct {
	ts      *testServer
	base    string
	tokens  map[string]string // scope → "Bearer <token>" of the sandbox organisation
	secret  string            // the sandbox app's client_secret
	other   map[string]string // the second partner's: "pay", "cards" tokens, "payment", "limit" ids
	counter atomic.Int64
}

func newBankingHostile(t *testing.T) *hostileTarget {
	// The rate limit is lifted: the sweep sends each operation dozens of
	// requests with one token, and a 429 would hide what it looks for.
	ts := startServer(t, "--only", "banking", "--banking-webhook-allow-private",
		"--banking-payment-rate", "100000", "--banking-payment-burst", "100000")
	b := &bankHostile{ts: ts, base: ts.urls["banking"], tokens: map[string]string{}, other: map[string]string{}}
	for _, scope := range []string{banking.ScopePayDocRU, banking.ScopePayDocRUInvoice, banking.ScopePayDocRUInvoiceAny,
		banking.ScopePayDocRUInvoiceBudget, banking.ScopeBusinessCardLimit, banking.ScopeGetClientAccounts,
		banking.ScopeGetCryptoInfo, banking.ScopeGetCryptoInfoEIO, banking.ScopeOpenID} {
		b.tokens[scope] = "Bearer " + bankingToken(t, ts, scope)
	}
	b.secret = bankingCLI(t, "", "app", "secret", "--data-dir", ts.dataDir)["client_secret"].(string)
	// An expired and a revoked token of every scope: issued, then aged or
	// revoked in the store before the server ever sees them.
	all := strings.Join(sortedKeys(map[string]bool{banking.ScopePayDocRU: true, banking.ScopePayDocRUInvoice: true,
		banking.ScopePayDocRUInvoiceAny: true, banking.ScopePayDocRUInvoiceBudget: true, banking.ScopeBusinessCardLimit: true,
		banking.ScopeGetClientAccounts: true, banking.ScopeGetCryptoInfo: true, banking.ScopeGetCryptoInfoEIO: true, banking.ScopeOpenID: true}), " ")
	expired := bankingCLI(t, "", "token", "--scope", all, "--data-dir", ts.dataDir)["access_token"].(string)
	revoked := bankingCLI(t, "", "token", "--scope", all, "--data-dir", ts.dataDir)["access_token"].(string)
	execStore(t, ts.dataDir, `UPDATE banking_tokens SET expires_at = 1 WHERE hash = $1`, banking.HashSecret(expired))
	execStore(t, ts.dataDir, `UPDATE banking_tokens SET revoked_at = 1 WHERE hash = $1`, banking.HashSecret(revoked))
	bad := map[string]string{
		"unknown": "Bearer 00000000-0000-4000-8000-000000000000-1",
		"garbage": "Bearer !!not a token!!",
		"empty":   "Bearer ",
		"basic":   "Basic dXNlcjpwYXNz",
		"expired": "Bearer " + expired,
		"revoked": "Bearer " + revoked,
		// A refresh token authenticates nothing but its own refresh.
		"refresh token": "Bearer " + b.refreshToken(t),
	}
	b.setUpOther(t)
	return &hostileTarget{
		name: "banking", base: b.base, contract: loadContract(t, "banking"), maxBody: 1 << 20,
		good: b.good, foreign: b.foreign, envelope: bankEnvelope,
		badCreds: func(hostileOp) map[string]string { return bad },
		unscoped: func(op hostileOp) (string, int) {
			allowed := bankHostileScopes[op.key()]
			for _, s := range []string{banking.ScopeGetCryptoInfo, banking.ScopePayDocRU, banking.ScopeBusinessCardLimit} {
				if !slices.Contains(allowed, s) {
					return b.tokens[s], http.StatusForbidden
				}
			}
			return "", 0
		},
		badIDs: []string{"not-a-uuid", "c0000000-0000-4000-8000-00000000000g", "%27%20OR%201%3D1--", strings.Repeat("9", 300)},
	}
}

// execStore runs one statement on the SQLite store of a server behind its
// back, as renameTables does.
func execStore(t *testing.T, dataDir, stmt string, args ...any) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dataDir, "partnerapi.db")+"?_pragma=busy_timeout%285000%29")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	res, err := db.ExecContext(context.Background(), stmt, args...)
	if err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("%s changed %d rows, want 1", stmt, n)
	}
}

// setUpOther provisions the second partner and has it create a payment
// draft and a card-limit application through the API.
func (b *bankHostile) setUpOther(t *testing.T) {
	dir := []string{"--data-dir", b.ts.dataDir}
	cli := func(args ...string) map[string]any { return bankingCLI(t, "", append(args, dir...)...) }
	org := cli("org", "create", "--name", "ООО Чужой", "--inn", otherINN, "--kpp", otherKPP, "--ogrn", otherOGRN)["id"].(string)
	cli("account", "add", "--org", org, "--number", otherAccount, "--bic", otherBIC, "--corr", otherCorr)
	cli("user", "create", "--org", org, "--login", "chuzhoy", "--password", "pw")
	client := cli("app", "create", "--name", "Other partner", "--redirect-uri", "https://other.example/cb")["client_id"].(string)
	cli("offer", "sign", "--client", client, "--account", otherAccount)
	cli("card", "add", "--org", org, "--id", "other-card-1", "--account", otherAccount, "--bic", otherBIC,
		"--pan", "2202200000000099", "--holder", "IVAN CHUZHOY")
	tok := func(scope string) string {
		return "Bearer " + cli("token", "--scope", scope, "--org", org, "--client", client)["access_token"].(string)
	}
	b.other["pay"], b.other["cards"], b.other["crypto"] = tok(banking.ScopePayDocRU), tok(banking.ScopeBusinessCardLimit), tok(banking.ScopeGetCryptoInfo)
	b.other["payment"], b.other["limit"], b.other["certreq"] = "d0000000-0000-4000-8000-0000000000b1", "d0000000-0000-4000-8000-0000000000b2", "d0000000-0000-4000-8000-0000000000b3"
	doc := bankDoc(b.other["payment"], map[string]any{"payerName": "ООО Чужой", "payerInn": otherINN, "payerKpp": otherKPP,
		"payerAccount": otherAccount, "payerBankBic": otherBIC, "payerBankCorrAccount": otherCorr, "purpose": otherMarker})
	for _, c := range []struct{ path, auth, body string }{
		{"/fintech/api/v1/payments", b.other["pay"], doc},
		{"/fintech/api/v1/business-cards/limits", b.other["cards"], cardLimit("other-card-1", b.other["limit"], 777.77)},
		{certReqV1, b.other["crypto"], certReqBody(b.other["certreq"], map[string]any{"userName": otherMarker, "orgName": "ООО Чужой"})},
	} {
		if status, raw := b.call(t, "POST", c.path, c.auth, c.body); status != http.StatusCreated {
			t.Fatalf("the second partner's POST %s: %d %s", c.path, status, raw)
		}
	}
}

// call sends one JSON request and returns the status and body.
func (b *bankHostile) call(t *testing.T, method, path, auth, body string) (int, []byte) {
	t.Helper()
	tg := &hostileTarget{base: b.base}
	return tg.send(t, method, hostileReq{path: path, auth: auth, body: body, ctype: "application/json"})
}

// id is a fresh externalId.
func (b *bankHostile) id() string {
	return fmt.Sprintf("e0000000-0000-4000-8000-%012d", b.counter.Add(1))
}

// exists reports whether GET path answers 200 with auth.
func (b *bankHostile) exists(path, auth string) func(t *testing.T) bool {
	return func(t *testing.T) bool {
		status, _ := b.call(t, "GET", path, auth, "")
		return status == http.StatusOK
	}
}

// state is the bankStatus of a document as its owner reads it.
func (b *bankHostile) state(t *testing.T, id, auth string) string {
	t.Helper()
	status, raw := b.call(t, "GET", "/fintech/api/v1/payments/"+id+"/state", auth, "")
	var s struct{ BankStatus string }
	if status != http.StatusOK || json.Unmarshal(raw, &s) != nil {
		t.Fatalf("state of %s: %d %s", id, status, raw)
	}
	return s.BankStatus
}

// limitState is the bankStatus of a card-limit application as its owner
// reads it.
func (b *bankHostile) limitState(t *testing.T, id, auth string) string {
	t.Helper()
	status, raw := b.call(t, "GET", "/fintech/api/v1/business-cards/limits/"+id+"/state", auth, "")
	var s struct{ BankStatus string }
	if status != http.StatusOK || json.Unmarshal(raw, &s) != nil {
		t.Fatalf("state of %s: %d %s", id, status, raw)
	}
	return s.BankStatus
}

// draft creates a payment draft of the sandbox organisation.
func (b *bankHostile) draft(t *testing.T) string {
	t.Helper()
	id := b.id()
	if status, raw := b.call(t, "POST", "/fintech/api/v1/payments", b.tokens[banking.ScopePayDocRU], bankDoc(id, nil)); status != http.StatusCreated {
		t.Fatalf("draft: %d %s", status, raw)
	}
	return id
}

// code signs the sandbox user in and returns a fresh authorization code.
func (b *bankHostile) code(t *testing.T) string {
	t.Helper()
	tg := &hostileTarget{base: b.base}
	resp, raw := tg.do(t, "POST", hostileReq{path: "/ic/sso/api/v2/oauth/authorize", body: authorizeForm(nil), ctype: "application/x-www-form-urlencoded"})
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || loc.Query().Get("code") == "" {
		t.Fatalf("authorize %d %s %s", resp.StatusCode, resp.Header.Get("Location"), raw)
	}
	return loc.Query().Get("code")
}

// refreshToken is a live refresh token of the sandbox app, which no
// operation but the token endpoint takes.
func (b *bankHostile) refreshToken(t *testing.T) string {
	t.Helper()
	form := url.Values{"grant_type": {"authorization_code"}, "code": {b.code(t)}, "redirect_uri": {banking.SandboxRedirectURI},
		"client_id": {banking.SandboxClientID}, "client_secret": {b.secret}}
	tg := &hostileTarget{base: b.base}
	status, raw := tg.send(t, "POST", hostileReq{path: "/ic/sso/api/v2/oauth/token", body: form.Encode(), ctype: "application/x-www-form-urlencoded"})
	var pair banking.TokenPair
	if status != http.StatusOK || json.Unmarshal(raw, &pair) != nil || pair.RefreshToken == "" {
		t.Fatalf("token: %d %s", status, raw)
	}
	return pair.RefreshToken
}

// good is a fresh request each banking operation answers with success.
func (b *bankHostile) good(t *testing.T, op hostileOp) (hostileReq, bool) {
	const pays = "/fintech/api/v1/payments"
	pay := b.tokens[banking.ScopePayDocRU]
	r := hostileReq{path: op.path, ctype: "application/json"}
	if scopes, ok := bankHostileScopes[op.key()]; ok {
		r.auth = b.tokens[scopes[0]]
	} else if op.secured {
		t.Errorf("%s has no entry in bankHostileScopes", op.key())
	}
	form := func(v url.Values) { r.ctype, r.body = "application/x-www-form-urlencoded", v.Encode() }
	payee := map[string]any{"payeeBankBic": banking.SandboxBIC, "payeeBankCorrAccount": banking.SandboxCorrAccount, "payeeInn": banking.SandboxOrgINN,
		"payeeKpp": banking.SandboxOrgKPP, "payeeName": "ООО Песочница", "isPaidByCredit": false}
	switch op.key() {
	case "POST " + pays, "POST " + pays + "/from-invoice", "POST " + pays + "/from-invoice-any":
		id := b.id()
		switch op.path {
		case pays:
			r.body = bankDoc(id, nil)
		case pays + "/from-invoice":
			r.body = invoiceDoc(id, nil)
		default:
			r.body = invoiceDoc(id, payee)
		}
		r.written = b.exists(pays+"/"+id, pay)
	case "POST " + pays + "/from-invoice-budget":
		id := b.id()
		r.body = invoiceDoc(id, map[string]any{"payeeName": "Казначейство России (ФНС России)", "payeeInn": banking.ENPPayeeINN,
			"payeeKpp": "770701001", "payeeAccount": banking.ENPPayeeAccount, "payeeBankBic": banking.ENPPayeeBIC, "payeeBankCorrAccount": banking.ENPPayeeCorrAcc,
			"departmentalInfo": map[string]any{"drawerStatus101": "01", "kbk": banking.ENPKBK, "oktmo": "0",
				"reasonCode106": "0", "taxPeriod107": "0", "docNumber108": "0", "docDate109": "0", "uip": "0"}})
		r.written = b.exists(pays+"/"+id, pay)
	case "POST " + pays + "/qr-confirmation":
		r.body = `{"externalDocIds":["` + banking.QRSandboxOK + `"]}`
	case "GET " + pays + "/{externalId}", "GET " + pays + "/{externalId}/state", "GET " + pays + "/{externalId}/digest", "GET " + pays + "/{externalId}/history",
		"GET " + pays + "/{externalId}/requisites-qr":
		r.path = strings.Replace(op.path, "{externalId}", b.draft(t), 1)
	case "POST " + pays + "/{externalId}/sign":
		id := b.draft(t)
		r.path = pays + "/" + id + "/sign"
		r.body = `{"digestSignatures":[{"base64Encoded":"MIIB","certificateUuid":"` + banking.SandboxCertSole + `"}]}`
		r.written = func(t *testing.T) bool { return b.state(t, id, pay) != "CREATED" }
	case "PUT /fintech/api/v1/webhook":
		hook := fmt.Sprintf("http://127.0.0.1:9/hook/%d", b.counter.Add(1))
		r.body = `{"url":"` + hook + `","format":"json"}`
		r.written = func(t *testing.T) bool {
			_, raw := b.call(t, "GET", "/fintech/api/v1/webhook", pay, "")
			return strings.Contains(string(raw), hook)
		}
	case "DELETE /fintech/api/v1/webhook":
		// A setting of the partner's for each request to remove; a hostile
		// variant leaves it in place.
		hook := fmt.Sprintf("http://127.0.0.1:9/hook/%d", b.counter.Add(1))
		if status, raw := b.call(t, "PUT", "/fintech/api/v1/webhook", pay, `{"url":"`+hook+`"}`); status != http.StatusOK {
			t.Fatalf("webhook set: %d %s", status, raw)
		}
		r.written = func(t *testing.T) bool {
			_, raw := b.call(t, "GET", "/fintech/api/v1/webhook", pay, "")
			return !strings.Contains(string(raw), hook)
		}
	case "GET /fintech/api/v1/webhook/deliveries":
		r.path += "?limit=5"
	case "GET /fintech/api/v1/business-cards", "POST /fintech/api/v1/business-cards":
		r.path += "?page=1"
	case "POST /fintech/api/v1/business-cards/limits":
		id := b.id()
		r.body = cardLimit("sbc-00001", id, 100)
		r.written = b.exists(op.path+"/"+id+"/state", r.auth)
	case "GET /fintech/api/v1/business-cards/limits/{externalId}/state":
		id := b.id()
		if status, raw := b.call(t, "POST", "/fintech/api/v1/business-cards/limits", r.auth, cardLimit("sbc-00001", id, 100)); status != http.StatusCreated {
			t.Fatalf("limit: %d %s", status, raw)
		}
		r.path = strings.Replace(op.path, "{externalId}", id, 1)
	case "POST /fintech/api/v1/business-cards/limits/{externalId}/sign":
		id := b.id()
		if status, raw := b.call(t, "POST", "/fintech/api/v1/business-cards/limits", r.auth, cardLimit("sbc-00001", id, 100)); status != http.StatusCreated {
			t.Fatalf("limit: %d %s", status, raw)
		}
		r.path = strings.Replace(op.path, "{externalId}", id, 1)
		r.body = limitSign(banking.SandboxCertSole)
		r.written = func(t *testing.T) bool { return b.limitState(t, id, r.auth) != banking.LimitCreated }
	case "POST /fintech/api/sandbox/clock":
		r.body = `{"advance":"1m"}`
	case "POST /fintech/api/sandbox/payments/{externalId}/delete":
		id := b.draft(t)
		r.path = strings.Replace(op.path, "{externalId}", id, 1)
		r.body = `{"comment":"CI"}`
		r.tolerated = []string{"empty body"} // a deletion needs no comment
		r.written = func(t *testing.T) bool { return b.state(t, id, pay) == banking.StatusDeleted }
	case "POST /fintech/api/sandbox/payments/{externalId}/edit":
		// 02 outside a budget payment fails a logical control: CHECKERROR,
		// which the corrected document leaves for CREATED.
		id := b.id()
		if status, raw := b.call(t, "POST", pays, pay, bankDoc(id, map[string]any{"operationCode": "02"})); status != http.StatusCreated {
			t.Fatalf("CHECKERROR document: %d %s", status, raw)
		}
		r.path = strings.Replace(op.path, "{externalId}", id, 1)
		r.body = bankDoc(id, nil)
		r.written = func(t *testing.T) bool { return b.state(t, id, pay) != banking.StatusCheckError }
	case "POST " + certReqV1, "POST " + certReqV2, "POST " + certReqV1 + "/eio", "POST " + certReqV2 + "/eio":
		id := b.id()
		if strings.HasSuffix(op.path, "/eio") {
			r.body = certReqEIOBody(id, nil)
		} else {
			r.body = certReqBody(id, nil)
		}
		r.written = b.exists(certReqV1+"/"+id+"/state", r.auth)
	case "GET " + certReqV1 + "/{externalId}/state", "GET " + certReqV1 + "/eio/{externalId}/state",
		"GET " + certReqV1 + "/{externalId}/print", "GET " + certReqV2 + "/{externalId}/print", "GET " + certReqV1 + "/eio/{externalId}/print":
		r.path = strings.Replace(op.path, "{externalId}", b.certRequest(t), 1)
	case "POST " + certReqV1 + "/{externalId}/activate", "POST " + certReqV1 + "/eio/{externalId}/activate":
		id := b.certRequest(t)
		r.path = strings.Replace(op.path, "{externalId}", id, 1)
		r.written = func(t *testing.T) bool { return b.certRequestStatus(t, id, r.auth) == banking.CertRequestActivated }
	case "GET /fintech/api/v1/client-info", "GET /fintech/api/v1/crypto", "GET /fintech/api/v1/crypto/eio",
		"GET /fintech/api/v1/webhook", "GET /ic/sso/api/v1/oauth/user-info", "GET /ic/sso/api/v2/oauth/user-info":
	case "GET /ic/sso/api/v2/oauth/authorize", "GET /ic/sbbid/api/v1/oauth/authorize", "GET /ic/sbbid/api/v2/oauth/authorize":
		r.path += "?" + url.Values{"response_type": {"code"}, "client_id": {banking.SandboxClientID}, "redirect_uri": {banking.SandboxRedirectURI},
			"scope": {"openid"}, "state": {"s1"}, "code_challenge": {"E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"}, "code_challenge_method": {"S256"}}.Encode()
		r.ctype = ""
	case "POST /ic/sso/api/v2/oauth/authorize", "POST /ic/sbbid/api/v1/oauth/authorize", "POST /ic/sbbid/api/v2/oauth/authorize":
		r.ctype, r.body, r.baseline = "application/x-www-form-urlencoded", authorizeForm(nil), http.StatusFound
	case "POST /ic/sso/api/v2/oauth/token", "POST /ic/sso/api/v1/oauth/token", "POST /ic/sso/api/oauth/token":
		form(url.Values{"grant_type": {"authorization_code"}, "code": {b.code(t)}, "redirect_uri": {banking.SandboxRedirectURI},
			"client_id": {banking.SandboxClientID}, "client_secret": {b.secret}})
	case "POST /ic/sso/api/v1/oauth/revoke", "POST /ic/sso/api/v2/oauth/revoke":
		form(url.Values{"token": {"00000000-0000-4000-8000-000000000000-1"}, "client_id": {banking.SandboxClientID}, "client_secret": {b.secret}})
	case "POST /ic/sso/api/v1/change-client-secret":
		form(secretChangeApp(t, b.ts.dataDir))
	default:
		return hostileReq{}, false
	}
	return r, true
}

// foreign is op's good request naming the second partner's document.
func (b *bankHostile) foreign(t *testing.T, op hostileOp) (hostileReq, bool) {
	r, ok := b.good(t, op)
	if !ok {
		return r, false
	}
	r.leaks = []string{otherMarker, otherAccount, "777.77", "other-card-1"}
	id, owner := b.other["payment"], b.other["pay"]
	if strings.Contains(op.path, "/business-cards/limits/") {
		id, owner = b.other["limit"], b.other["cards"]
	}
	if strings.Contains(op.path, "/cert-requests/") {
		id, owner = b.other["certreq"], b.other["crypto"]
	}
	r.path = withPathParams(op, r.path, id)
	switch {
	case op.key() == "POST /fintech/api/v1/payments/{externalId}/sign",
		op.key() == "POST /fintech/api/sandbox/payments/{externalId}/delete":
		r.written = func(t *testing.T) bool { return b.state(t, id, owner) != "CREATED" }
	case op.key() == "POST /fintech/api/sandbox/payments/{externalId}/edit":
		// An edit that reached the other organisation's document would
		// replace its content, the purpose that carries otherMarker.
		r.written = func(t *testing.T) bool {
			_, raw := b.call(t, "GET", "/fintech/api/v1/payments/"+id, owner, "")
			return !strings.Contains(string(raw), otherMarker)
		}
	case op.key() == "POST /fintech/api/v1/business-cards/limits/{externalId}/sign":
		r.written = func(t *testing.T) bool { return b.limitState(t, id, owner) != banking.LimitCreated }
	case strings.HasSuffix(op.path, "/{externalId}/activate") || strings.HasSuffix(op.path, "/{externalId}/print"):
		// Printing or activating another organisation's request would move
		// it on from CREATED.
		r.written = func(t *testing.T) bool { return b.certRequestStatus(t, id, owner) != banking.CertRequestCreated }
	}
	return r, true
}

// bankEnvelope holds an error answer to the banking envelope: RFC 6749's
// body on the OAuth endpoints for their own errors, the banking Error
// (reference §13) everywhere else, the platform's 405 and 413 included.
func bankEnvelope(t *testing.T, path string, status int, raw []byte) {
	t.Helper()
	oauth := strings.HasPrefix(path, "/ic/sso/") || strings.HasPrefix(path, "/ic/sbbid/")
	if oauth && !strings.HasSuffix(path, "/user-info") && status != 405 && status != 413 {
		var e struct {
			Error            string `json:"error"`
			ErrorDescription string `json:"error_description"`
		}
		if err := strictJSON(raw, &e); err != nil || e.Error == "" {
			t.Errorf("not an OAuth error body (%v): %.300s", err, raw)
		}
		return
	}
	var e struct {
		Cause       string   `json:"cause"`
		ReferenceID string   `json:"referenceId"`
		Message     string   `json:"message"`
		FieldNames  []string `json:"fieldNames"`
		Checks      []string `json:"checks"`
		Fields      []string `json:"fields"`
	}
	causes := []string{"DESERIALIZATION_FAULT", "VALIDATION_FAULT", "WORKFLOW_FAULT", "SIGN_CHECK_EXCEPTION", "UNAUTHORIZED",
		"ACTION_ACCESS_EXCEPTION", "DATA_NOT_FOUND_EXCEPTION", "CARD_ID_NOT_FOUND", "NOT_FOUND", "JWS_EXCEPTED", "TOO_MANY_REQUESTS",
		"UNKNOWN_EXCEPTION", "UNAVAILABLE_RESOURCE_EXCEPTION"}
	if err := strictJSON(raw, &e); err != nil || !slices.Contains(causes, e.Cause) || !uuidPattern.MatchString(e.ReferenceID) || e.Message == "" {
		t.Errorf("not a banking error envelope (%v): %.300s", err, raw)
	}
	// Reference §2 and §13: a missing scope is ACTION_ACCESS_EXCEPTION,
	// a missing or bad token UNAUTHORIZED.
	if want := map[int]string{401: "UNAUTHORIZED", 403: "ACTION_ACCESS_EXCEPTION"}[status]; want != "" && e.Cause != want {
		t.Errorf("%d with cause %s, want %s", status, e.Cause, want)
	}
}
