package bankapi

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/banking/bankingsql"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// gateEnv is the banking API as serve builds it, every service over one
// sandbox-seeded SQLite store and sharing one Gate, so that each route's
// gate is the one the deployment has.
type gateEnv struct {
	t     *testing.T
	srv   *httptest.Server
	gate  *banking.Gate
	cards *banking.Cards
	// tokens are the sandbox user's, one per scope, so that each route is
	// called with the scope it needs.
	tokens   map[string]string
	identity *banking.Identity
}

// freshTokens issues the sandbox user a new token of each scope, whose
// rate-limit budgets are untouched.
func (e *gateEnv) freshTokens() {
	e.t.Helper()
	for _, scope := range []string{banking.ScopePayDocRU, banking.ScopeBusinessCardLimit, banking.ScopeGetClientAccounts,
		banking.ScopeGetCryptoInfo, banking.ScopeGetCryptoInfoEIO, banking.ScopeOpenID} {
		p, err := e.identity.IssueTokens(context.Background(), banking.SandboxClientID, banking.SandboxOrgID, banking.SandboxUserID, []string{scope})
		if err != nil {
			e.t.Fatal(err)
		}
		e.tokens[scope] = p.AccessToken
	}
}

func newGateEnv(t *testing.T, gate *banking.Gate) *gateEnv {
	t.Helper()
	ctx := context.Background()
	db := storetest.SQLite(t)
	for _, m := range []func(context.Context, *sqldb.DB) error{bankingsql.MigrateIdentity, bankingsql.MigrateCards, bankingsql.MigratePayments} {
		if err := m(ctx, db); err != nil {
			t.Fatal(err)
		}
	}
	ids := bankingsql.NewIdentityStore(db)
	identity := banking.NewIdentity(ids)
	if err := identity.SeedSandbox(ctx); err != nil {
		t.Fatal(err)
	}
	cardStore := bankingsql.NewCardStore(db)
	cards, err := banking.NewCards(cardStore, banking.CardsConfig{}, &fakeVerifier{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := banking.SeedSandboxCards(ctx, cardStore, banking.SandboxOrgID, banking.SandboxClientID, banking.SandboxBIC,
		[]string{banking.SandboxAccount}, nil); err != nil {
		t.Fatal(err)
	}
	payStore := bankingsql.NewPaymentStore(db)
	box, err := banking.NewSecretBox([]byte(strings.Repeat("k", banking.WebhookKeySize)))
	if err != nil {
		t.Fatal(err)
	}
	pay := &banking.PaymentService{Store: payStore, Accounts: banking.IdentityAccounts{Store: ids},
		Verifier: banking.NewSignatureVerifier(banking.ContourSandbox, ids), Gate: gate}
	cards.Gate, identity.Gate = gate, gate
	srv := httptest.NewServer(NewServer(Deps{Auth: identity, Identity: identity, Cards: cards, Payments: pay,
		Webhooks:     &banking.Webhooks{Store: payStore, Box: box, URLs: loopbackURLs, Gate: gate},
		CertRequests: &banking.CertRequests{Store: ids, Directory: ids, Contour: banking.ContourSandbox, Gate: gate}}))
	t.Cleanup(srv.Close)
	e := &gateEnv{t: t, srv: srv, gate: gate, cards: cards, tokens: map[string]string{}, identity: identity}
	e.freshTokens()
	return e
}

func (e *gateEnv) do(method, path, scope, body string) (int, string, http.Header) {
	e.t.Helper()
	req, _ := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if scope != "" {
		req.Header.Set("Authorization", "Bearer "+e.tokens[scope])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw), resp.Header
}

// gatedRoute is one business route of the API, called with the scope it
// needs. written, when set, tells whether the route's call was stored.
type gatedRoute struct {
	method, path, scope, body string
	written                   func(e *gateEnv) bool
}

const (
	gateLimitID = "6a0c1a2b-0000-4000-8000-0000000000b1"
	gatePayID   = "6a0c1a2b-0000-4000-8000-0000000000c1"
)

// gatedRoutes is every partner-facing business route (routes.go): what
// the maintenance switch closes and the rate limit counts. The OAuth
// endpoints are not here (TestGateLeavesOAuthOpen).
func gatedRoutes() []gatedRoute {
	const api = "/fintech/api"
	unknown := "/6a0c1a2b-0000-4000-8000-0000000000ff"
	limitState := func(e *gateEnv) bool {
		st, _, _ := e.do("GET", api+"/v1/business-cards/limits/"+gateLimitID+"/state", banking.ScopeBusinessCardLimit, "")
		return st != http.StatusNotFound
	}
	return []gatedRoute{
		{method: "GET", path: api + "/v1/client-info", scope: banking.ScopeGetClientAccounts},
		{method: "GET", path: api + "/v1/crypto", scope: banking.ScopeGetCryptoInfo},
		{method: "GET", path: api + "/v1/crypto/eio", scope: banking.ScopeGetCryptoInfoEIO},
		{method: "GET", path: api + "/v1/business-cards", scope: banking.ScopeBusinessCardLimit},
		{method: "POST", path: api + "/v1/business-cards", scope: banking.ScopeBusinessCardLimit},
		{method: "POST", path: api + "/v1/business-cards/limits", scope: banking.ScopeBusinessCardLimit, written: limitState,
			body: `{"code":"NON_RENEW","businessCardId":"sbc-00001","externalId":"` + gateLimitID + `","limit":5000}`},
		{method: "GET", path: api + "/v1/business-cards/limits" + unknown + "/state", scope: banking.ScopeBusinessCardLimit},
		{method: "POST", path: api + "/sandbox/clock", scope: banking.ScopeBusinessCardLimit, body: `{"advance":"49h"}`,
			written: func(e *gateEnv) bool {
				now, err := e.cards.Now(context.Background(), banking.SandboxOrgID)
				if err != nil {
					e.t.Fatal(err)
				}
				return time.Until(now) > 48*time.Hour
			}},
		{method: "POST", path: paymentsBase, scope: banking.ScopePayDocRU, body: payDoc(gatePayID, map[string]any{"date": banking.BankDate(time.Now(), nil).Format(time.DateOnly)}),
			written: func(e *gateEnv) bool {
				st, _, _ := e.do("GET", paymentsBase+"/"+gatePayID+"/state", banking.ScopePayDocRU, "")
				return st != http.StatusNotFound
			}},
		{method: "GET", path: paymentsBase + unknown + "/state", scope: banking.ScopePayDocRU},
		{method: "PUT", path: webhookBase, scope: banking.ScopePayDocRU, body: `{"url":"http://127.0.0.1:9/hook"}`,
			written: func(e *gateEnv) bool {
				_, body, _ := e.do("GET", webhookBase, banking.ScopePayDocRU, "")
				return strings.Contains(body, "127.0.0.1")
			}},
		{method: "GET", path: webhookBase + "/deliveries", scope: banking.ScopePayDocRU},
		{method: "GET", path: api + "/v1/crypto/cert-requests" + unknown + "/state", scope: banking.ScopeGetCryptoInfo},
	}
}

// TestGateMaintenance: with the maintenance switch on, every business
// route answers the 503 envelope with a Retry-After, after authentication
// (an anonymous call is still 401) and before it writes anything; the
// same call succeeds once the switch is off. Before, the card routes,
// client-info and crypto info answered as if the bank were up.
func TestGateMaintenance(t *testing.T) {
	for _, r := range gatedRoutes() {
		t.Run(r.method+" "+r.path, func(t *testing.T) {
			e := newGateEnv(t, &banking.Gate{Maintenance: &banking.Maintenance{}})
			e.gate.Maintenance.Set(true)
			if st, _, _ := e.do(r.method, r.path, "", r.body); st != http.StatusUnauthorized {
				t.Errorf("anonymous in maintenance: %d, want 401", st)
			}
			st, body, h := e.do(r.method, r.path, r.scope, r.body)
			if st != http.StatusServiceUnavailable || cause(body) != "UNAVAILABLE_RESOURCE_EXCEPTION" || h.Get("Retry-After") == "" {
				t.Fatalf("in maintenance: %d %s (Retry-After %q), want 503 UNAVAILABLE_RESOURCE_EXCEPTION with Retry-After", st, body, h.Get("Retry-After"))
			}
			e.gate.Maintenance.Set(false)
			if r.written != nil && r.written(e) {
				t.Fatal("the call refused for maintenance was stored")
			}
			if st, body, _ := e.do(r.method, r.path, r.scope, r.body); st == http.StatusServiceUnavailable || st == http.StatusTooManyRequests {
				t.Fatalf("after maintenance: %d %s", st, body)
			}
			if r.written != nil && !r.written(e) {
				t.Fatal("the call after maintenance was not stored: the row proves nothing")
			}
		})
	}
}

// TestGateRateLimit: with a burst of one call per token and operation,
// every business route's second call is the 429 envelope, as a payment
// operation's is, and another route (another operation) still has its
// own budget. Before, nothing limited the card routes, client-info or
// crypto info.
func TestGateRateLimit(t *testing.T) {
	e := newGateEnv(t, &banking.Gate{Limits: &banking.OpLimiter{Rate: 0.001, Burst: 1}})
	for _, r := range gatedRoutes() {
		t.Run(r.method+" "+r.path, func(t *testing.T) {
			// GET and POST of the card list are one operation with one
			// budget, so each row starts with tokens of their own.
			e.freshTokens()
			if st, body, _ := e.do(r.method, r.path, r.scope, r.body); st == http.StatusTooManyRequests {
				t.Fatalf("first call: %d %s", st, body)
			}
			st, body, h := e.do(r.method, r.path, r.scope, r.body)
			if st != http.StatusTooManyRequests || cause(body) != "TOO_MANY_REQUESTS" {
				t.Fatalf("second call: %d %s, want 429 TOO_MANY_REQUESTS", st, body)
			}
			// What a payment operation's 429 carries, no more and no less.
			probe := paymentsBase + "/6a0c1a2b-0000-4000-8000-0000000000fe/state"
			e.do("GET", probe, banking.ScopePayDocRU, "")
			pst, _, ph := e.do("GET", probe, banking.ScopePayDocRU, "")
			if pst != http.StatusTooManyRequests {
				t.Fatalf("payment probe: %d, want 429", pst)
			}
			if h.Get("Retry-After") != ph.Get("Retry-After") || h.Get("Content-Type") != ph.Get("Content-Type") {
				t.Errorf("headers %v, a payment 429's %v", h, ph)
			}
		})
	}
}

// TestGateLeavesOAuthOpen: the bank's identity server's endpoints, which
// the maintenance switch does not stand for, keep answering, so partners
// sign in and refresh tokens for when the API is back.
func TestGateLeavesOAuthOpen(t *testing.T) {
	e := newGateEnv(t, &banking.Gate{Maintenance: &banking.Maintenance{}})
	e.gate.Maintenance.Set(true)
	if st, body, _ := e.do("GET", "/ic/sso/api/v1/oauth/user-info", banking.ScopeOpenID, ""); st != http.StatusOK {
		t.Fatalf("user-info in maintenance: %d %s", st, body)
	}
}
