package bankapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/banking/bankingsql"
	"partnerapi/internal/gost"
	"partnerapi/internal/storetest"
)

// idEnv is a banking server over a real, sandbox-seeded identity store
// with a movable clock.
type idEnv struct {
	srv *httptest.Server
	id  *banking.Identity
	now time.Time
}

func newIDEnv(t *testing.T) *idEnv {
	t.Helper()
	db := storetest.SQLite(t)
	ctx := context.Background()
	if err := bankingsql.MigrateIdentity(ctx, db); err != nil {
		t.Fatal(err)
	}
	store := bankingsql.NewIdentityStore(db)
	e := &idEnv{id: banking.NewIdentity(store), now: time.Now()}
	e.id.Now = func() time.Time { return e.now }
	if err := e.id.SeedSandbox(ctx); err != nil {
		t.Fatal(err)
	}
	mux := NewServer(Deps{Auth: e.id, Identity: e.id})
	e.srv = httptest.NewServer(mux)
	t.Cleanup(e.srv.Close)
	return e
}

func (e *idEnv) token(t *testing.T, scopes ...string) banking.TokenPair {
	t.Helper()
	p, err := e.id.IssueTokens(context.Background(), banking.SandboxClientID, banking.SandboxOrgID, banking.SandboxUserID, scopes)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (e *idEnv) get(t *testing.T, path, auth string, into any) (int, errorBody) {
	t.Helper()
	req, _ := http.NewRequest("GET", e.srv.URL+path, nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var eb errorBody
	if resp.StatusCode != http.StatusOK {
		_ = json.NewDecoder(resp.Body).Decode(&eb)
		return resp.StatusCode, eb
	}
	if into != nil {
		if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode, eb
}

func TestIdentityAuth(t *testing.T) {
	e := newIDEnv(t)
	good := e.token(t, banking.ScopeGetClientAccounts)
	revoked := e.token(t, banking.ScopeGetClientAccounts)
	if err := e.id.Revoke(context.Background(), banking.SandboxClientID, revoked.AccessToken); err != nil {
		t.Fatal(err)
	}
	noScope := e.token(t, banking.ScopePayDocRU)
	tests := []struct {
		name   string
		auth   string
		status int
		cause  string
	}{
		{"bearer", "Bearer " + good.AccessToken, 200, ""},
		{"bare token", good.AccessToken, 200, ""},
		{"no token", "", 401, "UNAUTHORIZED"},
		{"unknown token", "Bearer 00000000-0000-4000-8000-000000000000-1", 401, "UNAUTHORIZED"},
		{"refresh token is not an access token", "Bearer " + good.RefreshToken, 401, "UNAUTHORIZED"},
		{"revoked", "Bearer " + revoked.AccessToken, 401, "UNAUTHORIZED"},
		{"missing scope", "Bearer " + noScope.AccessToken, 403, "ACTION_ACCESS_EXCEPTION"},
		// RFC 9110 §5.6.3 white space (SP, HTAB) around the token is
		// optional; no other white space is, Unicode's included.
		{"spaces and tabs", "Bearer \t " + good.AccessToken + " \t", 200, ""},
		{"trailing NBSP", "Bearer " + good.AccessToken + "\u00a0", 401, "UNAUTHORIZED"},
		{"bare token, trailing NBSP", good.AccessToken + "\u00a0", 401, "UNAUTHORIZED"},
		{"leading NBSP", "\u00a0Bearer " + good.AccessToken, 401, "UNAUTHORIZED"},
		{"NBSP after the scheme", "Bearer\u00a0" + good.AccessToken, 401, "UNAUTHORIZED"},
		{"trailing em space", "Bearer " + good.AccessToken + "\u2003", 401, "UNAUTHORIZED"},
		{"trailing NEL", "Bearer " + good.AccessToken + "\u0085", 401, "UNAUTHORIZED"},
		{"token and more", "Bearer " + good.AccessToken + " x", 401, "UNAUTHORIZED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, eb := e.get(t, "/fintech/api/v1/client-info", tt.auth, nil)
			if status != tt.status || eb.Cause != tt.cause {
				t.Fatalf("status %d cause %q, want %d %q", status, eb.Cause, tt.status, tt.cause)
			}
			if status != 200 && eb.ReferenceID == "" {
				t.Fatal("error without referenceId")
			}
		})
	}
	t.Run("expired", func(t *testing.T) {
		e.now = e.now.Add(banking.AccessTokenTTL)
		defer func() { e.now = e.now.Add(-banking.AccessTokenTTL) }()
		if status, eb := e.get(t, "/fintech/api/v1/client-info", good.AccessToken, nil); status != 401 || eb.Cause != "UNAUTHORIZED" {
			t.Fatalf("expired token: %d %q", status, eb.Cause)
		}
	})
}

func TestClientInfo(t *testing.T) {
	e := newIDEnv(t)
	tok := e.token(t, banking.ScopeGetClientAccounts)
	var ci map[string]any
	if status, eb := e.get(t, "/fintech/api/v1/client-info", tok.AccessToken, &ci); status != 200 {
		t.Fatalf("%d %+v", status, eb)
	}
	if ci["inn"] != banking.SandboxOrgINN || ci["ogrn"] != banking.SandboxOrgOGRN {
		t.Fatalf("org %v", ci)
	}
	if kpps := ci["kpps"].([]any); len(kpps) != 1 || kpps[0] != banking.SandboxOrgKPP {
		t.Fatalf("kpps %v", kpps)
	}
	// The registered address (user-info's orgJuridicalAddress) is listed
	// as the Java SDK's Address reads it; before, addresses was always
	// empty.
	if addrs := ci["addresses"].([]any); len(addrs) != 1 || addrs[0].(map[string]any)["fullAddress"] != banking.SandboxOrgAddress {
		t.Fatalf("addresses %v", addrs)
	}
	accts := ci["accounts"].([]any)
	if len(accts) != 2 {
		t.Fatalf("accounts %v", accts)
	}
	a := accts[0].(map[string]any)
	if a["number"] != banking.SandboxAccount || a["bic"] != banking.SandboxBIC || a["state"] != "OPEN" ||
		a["currencyCode"] != "810" || a["mode"] != "STANDART" || a["closeDate"] != nil ||
		// The provider's type of a settlement account (condo's
		// SbbolAccount; before, "CURRENT"), and the overdraft flag of
		// the reference's sample.
		a["type"] != "calculated" || a["overdraft"] != false {
		t.Fatalf("account %v", a)
	}
}

// TestClientInfoAccountMode: an account's mode says what may move through
// it (reference §10). A blocked account is refused as a payer but still
// credited, so it only receives: ONLY_RECEIVING (before, the opposite,
// FORBIDDEN_RECEIVING). Open and closed accounts are STANDART.
func TestClientInfoAccountMode(t *testing.T) {
	e := newIDEnv(t)
	want := map[string]string{banking.SandboxAccount: "STANDART"}
	for number, state := range map[string]string{
		"40702810100000000101": banking.AccountBlocked,
		"40702810400000000102": banking.AccountClosed,
		"40702810700000000103": banking.AccountOpen,
	} {
		a := banking.Account{Number: number, OrgID: banking.SandboxOrgID, BIC: banking.SandboxBIC,
			CorrAccount: banking.SandboxCorrAccount, Currency: "810", Name: "р/с", Status: state, OpenDate: "2024-01-01"}
		if err := a.Validate(); err != nil {
			t.Fatal(err)
		}
		if err := e.id.Store.AddAccount(context.Background(), a); err != nil {
			t.Fatal(err)
		}
		want[number] = map[string]string{banking.AccountBlocked: "ONLY_RECEIVING"}[state]
		if want[number] == "" {
			want[number] = "STANDART"
		}
	}
	var ci struct {
		Accounts []struct{ Number, State, Mode string } `json:"accounts"`
	}
	if status, eb := e.get(t, "/fintech/api/v1/client-info", e.token(t, banking.ScopeGetClientAccounts).AccessToken, &ci); status != 200 {
		t.Fatalf("%d %+v", status, eb)
	}
	seen := 0
	for _, a := range ci.Accounts {
		if w, ok := want[a.Number]; ok {
			seen++
			if a.Mode != w {
				t.Errorf("account %s (%s): mode %q, want %q", a.Number, a.State, a.Mode, w)
			}
		}
	}
	if seen != len(want) {
		t.Fatalf("client-info lists %d of the %d accounts: %+v", seen, len(want), ci.Accounts)
	}
}

// TestClientInfoCloseDate: a closed account recorded with the day it was
// closed answers it as closeDate (reference §10); before, closeDate was
// always null. One recorded without the day, and every open account, keeps
// null.
func TestClientInfoCloseDate(t *testing.T) {
	e := newIDEnv(t)
	want := map[string]any{banking.SandboxAccount: nil, "40702810100000000101": "2025-03-31", "40702810400000000102": nil}
	for number, day := range map[string]string{"40702810100000000101": "2025-03-31", "40702810400000000102": ""} {
		a := banking.Account{Number: number, OrgID: banking.SandboxOrgID, BIC: banking.SandboxBIC, CorrAccount: banking.SandboxCorrAccount,
			Currency: "810", Name: "р/с", Status: banking.AccountClosed, OpenDate: "2024-01-01", CloseDate: day}
		if err := e.id.Store.AddAccount(context.Background(), a); err != nil {
			t.Fatal(err)
		}
	}
	var ci struct {
		Accounts []map[string]any `json:"accounts"`
	}
	if status, eb := e.get(t, "/fintech/api/v1/client-info", e.token(t, banking.ScopeGetClientAccounts).AccessToken, &ci); status != 200 {
		t.Fatalf("%d %+v", status, eb)
	}
	seen := 0
	for _, a := range ci.Accounts {
		w, ok := want[a["number"].(string)]
		if !ok {
			continue
		}
		seen++
		if got, present := a["closeDate"]; !present || got != w {
			t.Errorf("account %v: closeDate %v (present %v), want %v", a["number"], got, present, w)
		}
	}
	if seen != len(want) {
		t.Fatalf("client-info lists %d of the %d accounts: %v", seen, len(want), ci.Accounts)
	}
}

var updateIdentity = flag.Bool("update-identity", false, "rewrite testdata/identity_* golden files")

// TestClientInfoGolden pins the client-info wire format of the sandbox
// organisation.
func TestClientInfoGolden(t *testing.T) {
	e := newIDEnv(t)
	tok := e.token(t, banking.ScopeGetClientAccounts)
	req, _ := http.NewRequest("GET", e.srv.URL+"/fintech/api/v1/client-info", nil)
	req.Header.Set("Authorization", tok.AccessToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	identityGolden(t, "testdata/identity_client_info.golden", raw)
}

// identityGolden holds a JSON answer, indented as sent (keeping its field
// order), to its golden file; -update-identity rewrites the file.
func identityGolden(t *testing.T, golden string, raw []byte) {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Indent(&buf, bytes.TrimSpace(raw), "", "  "); err != nil {
		t.Fatal(err)
	}
	got := append(buf.Bytes(), '\n')
	if *updateIdentity {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("the answer differs from %s:\n%s", golden, got)
	}
}

func TestCryptoInfo(t *testing.T) {
	e := newIDEnv(t)
	tok := e.token(t, banking.ScopeGetCryptoInfo)
	eio := e.token(t, banking.ScopeGetCryptoInfoEIO)
	for _, c := range []struct {
		path, token string
		status      int
	}{
		{"/fintech/api/v1/crypto", tok.AccessToken, 200},
		{"/fintech/api/v1/crypto/eio", eio.AccessToken, 200},
		{"/fintech/api/v1/crypto/eio", tok.AccessToken, 403},
		{"/fintech/api/v1/crypto", eio.AccessToken, 403},
	} {
		// /v1/crypto/eio lists each user's profiles under its sub
		// (TestCryptoInfoEIOJavaShape); the sandbox has one user.
		var ci cryptoInfo
		var eioInfo cryptoInfoEIO
		into := any(&ci)
		if strings.HasSuffix(c.path, "/eio") {
			into = &eioInfo
		}
		status, _ := e.get(t, c.path, c.token, into)
		if status != c.status {
			t.Fatalf("%s: %d, want %d", c.path, status, c.status)
		}
		if status != 200 {
			continue
		}
		if into == &eioInfo {
			if len(eioInfo.CryptoUserInfos) != 1 || eioInfo.CryptoUserInfos[0].Sub != banking.SandboxUserID {
				t.Fatalf("eio users %+v", eioInfo.CryptoUserInfos)
			}
			ci.CryptoProfileInfos = eioInfo.CryptoUserInfos[0].CryptoProfileInfos
		}
		uuids := map[string]string{}
		for _, p := range ci.CryptoProfileInfos {
			for _, info := range p.CertificateInfos {
				uuids[info.UUID] = p.TypeName
				der, err := base64.StdEncoding.DecodeString(info.Cert)
				if err != nil {
					t.Fatal(err)
				}
				cert, err := gost.ParseCertificate(der)
				if err != nil || cert.SerialHex != info.SerialNumber || cert.Issuer != info.Issuer || !info.Active {
					t.Fatalf("certificate %s: %v", info.UUID, err)
				}
			}
		}
		if len(uuids) != 4 || uuids[banking.SandboxCertQualified] != "UKEP_UL" || uuids[banking.SandboxCertSole] != "SMS" {
			t.Fatalf("profiles %v", uuids)
		}
	}
}

// TestCryptoInfoBankCertificate: certBank is the bank's signing certificate
// (base64 DER) and certBankUuid its kid, the same on every answer and for a
// second server given the same key; both were empty before the bank key.
func TestCryptoInfoBankCertificate(t *testing.T) {
	e := newIDEnv(t)
	key, err := banking.NewBankKey(e.now)
	if err != nil {
		t.Fatal(err)
	}
	tok := e.token(t, banking.ScopeGetCryptoInfo, banking.ScopeGetCryptoInfoEIO)
	for round := range 2 {
		srv := httptest.NewServer(NewServer(Deps{Auth: e.id, Identity: e.id, JWS: key}))
		for _, path := range []string{"/fintech/api/v1/crypto"} {
			req, _ := http.NewRequest("GET", srv.URL+path, nil)
			req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var ci cryptoInfo
			err = json.NewDecoder(resp.Body).Decode(&ci)
			resp.Body.Close()
			if resp.StatusCode != 200 || err != nil {
				t.Fatalf("%s: %d %v", path, resp.StatusCode, err)
			}
			der, err := base64.StdEncoding.DecodeString(ci.CertBank)
			if err != nil {
				t.Fatalf("%s round %d: certBank is not base64: %v", path, round, err)
			}
			cert, err := gost.ParseCertificate(der)
			if err != nil || !bytes.Equal(cert.Raw, key.Cert.Raw) || !cert.PublicKey.Equal(key.Key.Public()) {
				t.Fatalf("%s round %d: certBank is not the bank's certificate: %v", path, round, err)
			}
			if ci.CertBankUUID != key.Kid || ci.CertBankUUID != banking.BankCertificateID(cert) || !gost.IsCanonicalUUID(ci.CertBankUUID) {
				t.Fatalf("%s round %d: certBankUuid %q, want the kid %q", path, round, ci.CertBankUUID, key.Kid)
			}
		}
		srv.Close()
	}
	// Without a bank key there is no certificate to name.
	var ci cryptoInfo
	if st, _ := e.get(t, "/fintech/api/v1/crypto", tok.AccessToken, &ci); st != 200 || ci.CertBank != "" || ci.CertBankUUID != "" {
		t.Fatalf("without a key: %d %+v", st, ci)
	}
}

func TestIdentityRoutesWithoutIdentity(t *testing.T) {
	srv := httptest.NewServer(NewServer(Deps{Auth: fakeAuth{"t": {OrgID: "o", Scopes: []string{banking.ScopeGetClientAccounts}}}}))
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL+"/fintech/api/v1/client-info", nil)
	req.Header.Set("Authorization", "t")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var eb errorBody
	_ = json.NewDecoder(resp.Body).Decode(&eb)
	if resp.StatusCode != 503 || !strings.Contains(eb.Cause, "UNAVAILABLE") {
		t.Fatalf("%d %+v", resp.StatusCode, eb)
	}
}
