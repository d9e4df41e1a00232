package bankapi

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"partnerapi/internal/testenv"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/banking/bankingsql"
	"partnerapi/internal/storetest"
)

// downIdentity is an identity store whose database is down: every token
// lookup fails with the error of a real connect to a closed port.
type downIdentity struct {
	banking.IdentityStore
	err error
}

func (d downIdentity) GetToken(context.Context, string) (banking.Token, error) {
	return banking.Token{}, d.err
}

// downPayments is the real payment store with its database gone: creates
// and reads fail as they do while PostgreSQL is stopped.
type downPayments struct {
	banking.PaymentStore
	err error
}

func (d downPayments) CreatePayment(context.Context, *banking.StoredPayment, []banking.StatusChange) error {
	return d.err
}

func (d downPayments) GetPayment(context.Context, string, string) (*banking.StoredPayment, error) {
	return nil, d.err
}

// While the database is unavailable, a payment request is 503
// UNAVAILABLE_RESOURCE_EXCEPTION with a Retry-After, not 500: when the
// token cannot be checked (before any 401 could be decided) and when the
// token is good but the document cannot be stored or read. Each is an
// ERROR line saying the database is unavailable, with the answer's
// referenceId, and without the database URL's password.
func TestDatabaseOutageIsUnavailable(t *testing.T) {
	down := storetest.UnavailableError(t)
	db := storetest.SQLite(t)
	if err := bankingsql.MigratePayments(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	var logs testenv.LogBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	payments := func(auth banking.Authenticator) *httptest.Server {
		svc := &banking.PaymentService{Store: downPayments{bankingsql.NewPaymentStore(db), down}, Verifier: &payVerifier{},
			Accounts: payAccounts{banking.SandboxAccount: payOrg},
			Config:   banking.PaymentConfig{SigningHost: "https://sbi.example", Now: func() time.Time { return payNow }}}
		srv := httptest.NewServer(NewServer(Deps{Auth: auth, Payments: svc, Log: log}))
		t.Cleanup(srv.Close)
		return srv
	}
	noAuth := payments(banking.NewIdentity(downIdentity{err: down}))
	authed := payments(payAuth{"pay": {OrgID: payOrg, PartnerID: "p1", Scopes: []string{banking.ScopePayDocRU}}})
	for _, c := range []struct {
		name         string
		srv          *httptest.Server
		method, path string
		body         string
	}{
		{"token check", noAuth, http.MethodPost, paymentsBase, payDoc(newUUID(1), nil)},
		{"create", authed, http.MethodPost, paymentsBase, payDoc(newUUID(2), nil)},
		{"state", authed, http.MethodGet, paymentsBase + "/" + newUUID(3) + "/state", ""},
	} {
		e := &payEnv{t: t, srv: c.srv}
		status, m, raw := e.do(c.method, c.path, "pay", c.body)
		if status != http.StatusServiceUnavailable || m["cause"] != "UNAVAILABLE_RESOURCE_EXCEPTION" {
			t.Errorf("%s: %d %s, want 503 UNAVAILABLE_RESOURCE_EXCEPTION", c.name, status, raw)
			continue
		}
		ref, _ := m["referenceId"].(string)
		var line string
		for l := range strings.Lines(logs.String()) {
			if strings.Contains(l, "referenceId="+ref) {
				line = l
			}
		}
		if ref == "" || !strings.Contains(line, "level=ERROR") || !strings.Contains(line, "database unavailable") {
			t.Errorf("%s: no ERROR line about the database with referenceId %q in\n%s", c.name, ref, logs.String())
		}
	}
	// Retry-After, which do does not return, on one more request.
	req, _ := http.NewRequest(http.MethodPost, authed.URL+paymentsBase, strings.NewReader(payDoc(newUUID(4), nil)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "pay")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("create: %d with Retry-After %q, want 503 with a Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if strings.Contains(logs.String(), storetest.DeadPassword) {
		t.Errorf("the log shows the database password:\n%s", logs.String())
	}
}
