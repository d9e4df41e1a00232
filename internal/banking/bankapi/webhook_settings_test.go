package bankapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/banking/bankingsql"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/sqlite"
)

// hookEnv is the banking API with partners' webhook settings over one
// SQLite file. Tokens: "p1" and "p2" are two partner applications (of two
// organisations), "p3" a partner that never sets a webhook, "cards" has no
// payment scope.
type hookEnv struct {
	*payEnv
	dir   string
	db    *sqldb.DB
	store *bankingsql.PaymentStore
	hooks *banking.Webhooks
	box   *banking.SecretBox
}

func newHookEnv(t *testing.T, def banking.WebhookTarget) *hookEnv {
	dir := t.TempDir()
	db, err := sqlite.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := bankingsql.MigratePayments(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	box, err := banking.NewSecretBox([]byte(strings.Repeat("k", banking.WebhookKeySize)))
	if err != nil {
		t.Fatal(err)
	}
	store := bankingsql.NewPaymentStore(db)
	ver := &payVerifier{}
	svc := &banking.PaymentService{Store: store, Verifier: ver,
		Accounts: payAccounts{banking.SandboxAccount: payOrg, otherOrgAcc: payOrg2},
		Config:   banking.PaymentConfig{Now: func() time.Time { return payNow }}}
	hooks := &banking.Webhooks{Store: store, Box: box, Default: def, URLs: loopbackURLs, Now: func() time.Time { return payNow }}
	auth := payAuth{
		"p1":    {OrgID: payOrg, PartnerID: "partner-1", Scopes: []string{banking.ScopePayDocRU}},
		"p2":    {OrgID: payOrg2, PartnerID: "partner-2", Scopes: []string{banking.ScopePayDocRU}},
		"p3":    {OrgID: payOrg, PartnerID: "partner-3", Scopes: []string{banking.ScopePayDocRU}},
		"cards": {OrgID: payOrg, PartnerID: "partner-1", Scopes: []string{banking.ScopeBusinessCardLimit}},
	}
	srv := httptest.NewServer(NewServer(Deps{Auth: auth, Payments: svc, Webhooks: hooks}))
	t.Cleanup(srv.Close)
	return &hookEnv{payEnv: &payEnv{t: t, srv: srv, ver: ver, svc: svc}, dir: dir, db: db, store: store, hooks: hooks, box: box}
}

// pay creates a fully signed (hence IMPLEMENTED, final) payment of token's
// partner through HTTP.
func (e *hookEnv) pay(token, id string) {
	e.t.Helper()
	over := map[string]any{"digestSignatures": sigs(banking.SandboxCertSole)}
	if token == "p2" {
		// The second organisation pays from its own account, as itself.
		over["payerAccount"] = otherOrgAcc
		over["payerBankBic"] = "044525225"
		over["payerInn"] = payOrgINNs[payOrg2]
	}
	if st, m, raw := e.do("POST", paymentsBase, token, payDoc(id, over)); st != 201 || m["bankStatus"] != "IMPLEMENTED" {
		e.t.Fatalf("pay %s: %d %s", token, st, raw)
	}
}

func TestWebhookSettingsAPI(t *testing.T) {
	e := newHookEnv(t, banking.WebhookTarget{})
	put := func(token, body string) (int, map[string]any, string) { return e.do("PUT", webhookBase, token, body) }
	if st, m, _ := e.do("GET", webhookBase, "p1", ""); st != 200 || m["source"] != "none" || m["secretSet"] != false {
		t.Fatalf("before: %d %v", st, m)
	}
	for _, tc := range []struct {
		name, body, cause, field string
	}{
		{"relative url", `{"url":"/hook"}`, "VALIDATION_FAULT", "url"},
		{"ftp url", `{"url":"ftp://partner.example/hook"}`, "VALIDATION_FAULT", "url"},
		{"credentials in url", `{"url":"https://u:p@partner.example/hook"}`, "VALIDATION_FAULT", "url"},
		{"short secret", `{"url":"https://partner.example/hook","secret":"short"}`, "VALIDATION_FAULT", "secret"},
		{"url as number", `{"url":5}`, "DESERIALIZATION_FAULT", ""},
		{"bad json", `{"url":`, "DESERIALIZATION_FAULT", ""},
	} {
		st, m, raw := put("p1", tc.body)
		if st != 400 || m["cause"] != tc.cause || (tc.field != "" && !strings.Contains(raw, `"fieldNames":["`+tc.field+`"]`)) {
			t.Fatalf("%s: %d %s", tc.name, st, raw)
		}
	}
	if st, m, _ := put("cards", `{"url":"https://partner.example/hook"}`); st != 403 || m["cause"] != "ACTION_ACCESS_EXCEPTION" {
		t.Fatalf("without a payment scope: %d %v", st, m)
	}
	if st, m, _ := put("", `{"url":"https://partner.example/hook"}`); st != 401 || m["cause"] != "UNAUTHORIZED" {
		t.Fatalf("without a token: %d %v", st, m)
	}

	// First set without a secret: one is generated and shown this once.
	st, m, raw := put("p1", `{"url":"https://one.example/hook"}`)
	generated, _ := m["secret"].(string)
	if st != 200 || m["source"] != "partner" || m["url"] != "https://one.example/hook" || len(generated) < 16 {
		t.Fatalf("first set: %d %s", st, raw)
	}
	// A new URL without a secret keeps it; it is never shown again.
	if st, m, raw := put("p1", `{"url":"https://one.example/hook2"}`); st != 200 || m["secret"] != nil || m["secretSet"] != true {
		t.Fatalf("second set: %d %s", st, raw)
	}
	target, err := e.hooks.Target(context.Background(), "partner-1")
	if err != nil || target.URL != "https://one.example/hook2" || string(target.Secret) != generated {
		t.Fatalf("target %+v %v", target, err)
	}
	st, m, raw = e.do("GET", webhookBase, "p1", "")
	if st != 200 || m["url"] != "https://one.example/hook2" || m["secretSet"] != true || strings.Contains(raw, generated) || m["updatedAt"] == nil {
		t.Fatalf("get: %d %s", st, raw)
	}
	// A chosen secret replaces it; the stored form is sealed, not clear.
	chosen := "partner-one-chosen-secret"
	if st, _, raw := put("p1", `{"url":"https://one.example/hook2","secret":"`+chosen+`"}`); st != 200 || strings.Contains(raw, chosen) {
		t.Fatalf("set secret: %d %s", st, raw)
	}
	var sealed string
	if err := e.db.R.QueryRow(`SELECT secret FROM banking_partner_webhooks WHERE client_id = 'partner-1'`).Scan(&sealed); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(sealed, chosen) || !strings.HasPrefix(sealed, "v2:"+e.box.KeyID()+":") {
		t.Fatalf("stored secret %q", sealed)
	}
	if target, _ := e.hooks.Target(context.Background(), "partner-1"); string(target.Secret) != chosen {
		t.Fatalf("secret after replace %q", target.Secret)
	}
	// Another partner sees only its own (none) setting.
	if st, m, _ := e.do("GET", webhookBase, "p2", ""); st != 200 || m["source"] != "none" || m["url"] != nil {
		t.Fatalf("other partner: %d %v", st, m)
	}
	if st, m, _ := e.do("GET", webhookBase+"/deliveries?limit=0", "p1", ""); st != 400 || m["cause"] != "VALIDATION_FAULT" {
		t.Fatalf("limit 0: %d %v", st, m)
	}
}

// The deployment default serves partners without their own setting and is
// shown to them without its URL.
func TestWebhookDefaultTarget(t *testing.T) {
	e := newHookEnv(t, banking.WebhookTarget{URL: "https://operator.example/hook", Secret: []byte("operator-secret")})
	st, m, raw := e.do("GET", webhookBase, "p3", "")
	if st != 200 || m["source"] != "default" || m["secretSet"] != true || strings.Contains(raw, "operator.example") {
		t.Fatalf("default view: %d %s", st, raw)
	}
	if tg, err := e.hooks.Target(context.Background(), "partner-3"); err != nil || tg.URL != "https://operator.example/hook" {
		t.Fatalf("default target %+v %v", tg, err)
	}
}

// partnerSink is a partner's webhook receiver: it answers the scripted
// codes per externalId in turn (then 204) and records what it accepted.
type partnerSink struct {
	t      *testing.T
	secret []byte
	mu     sync.Mutex
	script map[string][]int
	calls  map[string]int
	ok     map[string]int // 2xx answers per externalId
	bodies []map[string]string
	srv    *httptest.Server
}

func newPartnerSink(t *testing.T, secret string, script map[string][]int) *partnerSink {
	p := &partnerSink{t: t, secret: []byte(secret), script: script, calls: map[string]int{}, ok: map[string]int{}}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Header.Get("X-Signature") != WebhookSignature(p.secret, body) {
			t.Errorf("webhook not signed with the partner's secret: %s", body)
			w.WriteHeader(401)
			return
		}
		var m map[string]string
		_ = json.Unmarshal(body, &m)
		p.mu.Lock()
		defer p.mu.Unlock()
		id := m["externalId"]
		if r.Header.Get("X-Event-Id") == "" || !strings.HasPrefix(r.Header.Get("X-Event-Id"), id+"/") {
			t.Errorf("X-Event-Id %q", r.Header.Get("X-Event-Id"))
		}
		code := 204
		if n := p.calls[id]; n < len(p.script[id]) {
			code = p.script[id][n]
		}
		p.calls[id]++
		if code < 300 {
			p.ok[id]++
			p.bodies = append(p.bodies, m)
		}
		w.WriteHeader(code)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *partnerSink) snapshot() (calls, ok map[string]int, bodies []map[string]string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	calls, ok = map[string]int{}, map[string]int{}
	for k, v := range p.calls {
		calls[k] = v
	}
	for k, v := range p.ok {
		ok[k] = v
	}
	return calls, ok, append([]map[string]string(nil), p.bodies...)
}

// Each partner's events go to its own URL signed with its own secret; the
// partner without a setting gets the deployment default; each delivery log
// lists only the partner's own events.
func TestWebhookDeliveryPerPartner(t *testing.T) {
	one := newPartnerSink(t, "partner-one-secret-0001", nil)
	two := newPartnerSink(t, "partner-two-secret-0002", nil)
	operator := newPartnerSink(t, "operator-secret", nil)
	e := newHookEnv(t, banking.WebhookTarget{URL: operator.srv.URL, Secret: operator.secret})
	for tok, sink := range map[string]*partnerSink{"p1": one, "p2": two} {
		if st, _, raw := e.do("PUT", webhookBase, tok, `{"url":"`+sink.srv.URL+`","secret":"`+string(sink.secret)+`"}`); st != 200 {
			t.Fatal(raw)
		}
	}
	ids := map[string]string{"p1": newUUID(800), "p2": newUUID(801), "p3": newUUID(802)}
	for tok, id := range ids {
		e.pay(tok, id)
	}
	now := payNow
	disp := &banking.WebhookDispatcher{Outbox: e.store, Sender: &WebhookSender{Targets: e.hooks, URLs: loopbackURLs}, Now: func() time.Time { return now }}
	if n, err := disp.RunOnce(context.Background()); err != nil || n != 3 {
		t.Fatalf("run: %d %v", n, err)
	}
	for tok, sink := range map[string]*partnerSink{"p1": one, "p2": two, "p3": operator} {
		_, ok, bodies := sink.snapshot()
		if len(bodies) != 1 || ok[ids[tok]] != 1 {
			t.Fatalf("%s's receiver got %v", tok, bodies)
		}
		b := bodies[0]
		if b["bankStatus"] != "IMPLEMENTED" || b["eventTime"] != payNow.Format(time.RFC3339Nano) || len(b) != 4 {
			t.Fatalf("payload %v", b)
		}
	}
	for tok, id := range ids {
		st, m, raw := e.do("GET", webhookBase+"/deliveries", tok, "")
		ds, _ := m["deliveries"].([]any)
		if st != 200 || len(ds) != 1 {
			t.Fatalf("%s deliveries: %d %s", tok, st, raw)
		}
		d := ds[0].(map[string]any)
		log, _ := d["log"].([]any)
		if d["externalId"] != id || d["state"] != "DELIVERED" || d["attempts"] != 1.0 || len(log) != 1 || log[0].(map[string]any)["httpStatus"] != 204.0 ||
			log[0].(map[string]any)["format"] != "json" {
			t.Fatalf("%s delivery %v", tok, d)
		}
	}
}

// Exactly the reference's codes are retried (with backoff); any other
// answer ends the delivery as FAILED after one attempt.
func TestWebhookRetryableCodes(t *testing.T) {
	codes := []struct {
		code  int
		retry bool
	}{
		{408, true}, {409, true}, {429, true}, {500, true}, {502, true}, {503, true}, {504, true}, {507, true}, {508, true}, {509, true},
		{400, false}, {401, false}, {403, false}, {404, false}, {410, false}, {413, false}, {422, false}, {501, false}, {505, false}, {511, false},
	}
	script := map[string][]int{}
	for i, c := range codes {
		script[newUUID(900+i)] = []int{c.code}
	}
	sink := newPartnerSink(t, "partner-one-secret-0001", script)
	e := newHookEnv(t, banking.WebhookTarget{})
	if st, _, raw := e.do("PUT", webhookBase, "p1", `{"url":"`+sink.srv.URL+`","secret":"partner-one-secret-0001"}`); st != 200 {
		t.Fatal(raw)
	}
	for i := range codes {
		e.pay("p1", newUUID(900+i))
	}
	now := payNow
	disp := &banking.WebhookDispatcher{Outbox: e.store, Sender: &WebhookSender{Targets: e.hooks, URLs: loopbackURLs}, ConfiguredOnly: true,
		BaseBackoff: time.Second, Now: func() time.Time { return now },
		PauseBase: -1} // each code's own retry, not the pause a 429 or 503 puts the partner in
	if n, err := disp.RunOnce(context.Background()); err != nil || n != len(codes) {
		t.Fatalf("first run %d %v", n, err)
	}
	// Nothing is due before the backoff ends.
	if n, _ := disp.RunOnce(context.Background()); n != 0 {
		t.Fatalf("retried before the backoff: %d", n)
	}
	now = now.Add(time.Second)
	retried := 0
	for _, c := range codes {
		if c.retry {
			retried++
		}
	}
	if n, err := disp.RunOnce(context.Background()); err != nil || n != retried {
		t.Fatalf("second run %d %v, want %d", n, err, retried)
	}
	ds, err := e.hooks.Deliveries(context.Background(), "partner-1", 100)
	if err != nil || len(ds) != len(codes) {
		t.Fatalf("deliveries %d %v", len(ds), err)
	}
	byID := map[string]banking.WebhookDelivery{}
	for _, d := range ds {
		byID[d.ExternalID] = d
	}
	calls, _, _ := sink.snapshot()
	for i, c := range codes {
		id := newUUID(900 + i)
		d := byID[id]
		want, attempts := "FAILED", 1
		if c.retry {
			want, attempts = "DELIVERED", 2
		}
		if d.State != want || d.Attempts != attempts || calls[id] != attempts || d.Log[0].HTTPStatus != c.code {
			t.Errorf("code %d: state %s attempts %d calls %d log %+v", c.code, d.State, d.Attempts, calls[id], d.Log)
		}
	}
}

// GET of the setting shows a pause of the partner's deliveries while it
// lasts, so a partner whose events stop arriving sees why; setting the
// webhook again ends it.
func TestWebhookSettingShowsPause(t *testing.T) {
	e := newHookEnv(t, banking.WebhookTarget{})
	if st, _, raw := e.do("PUT", webhookBase, "p1", `{"url":"https://one.example/hook","secret":"0123456789abcdef"}`); st != 200 {
		t.Fatalf("put: %d %s", st, raw)
	}
	if st, m, raw := e.do("GET", webhookBase, "p1", ""); st != 200 || m["pausedUntil"] != nil || m["failedInARow"] != nil {
		t.Fatalf("before any pause: %d %s", st, raw)
	}
	ctx := context.Background()
	for range 2 {
		if _, _, err := e.store.PauseWebhookPartner(ctx, "partner-1", payNow.Add(-time.Second), 5*time.Second, 5*time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	// The second failure fell in the first pause: still one in a row.
	st, m, raw := e.do("GET", webhookBase, "p1", "")
	if st != 200 || m["pausedUntil"] != payNow.Add(4*time.Second).UTC().Format(time.RFC3339) || m["failedInARow"] != float64(1) {
		t.Fatalf("during the pause: %d %s", st, raw)
	}
	if _, m, _ := e.do("GET", webhookBase, "p2", ""); m["pausedUntil"] != nil {
		t.Fatalf("another partner sees a pause: %v", m)
	}
	if st, _, raw := e.do("PUT", webhookBase, "p1", `{"url":"https://one.example/hook2"}`); st != 200 {
		t.Fatalf("put: %d %s", st, raw)
	}
	if st, m, raw := e.do("GET", webhookBase, "p1", ""); st != 200 || m["pausedUntil"] != nil {
		t.Fatalf("after a new setting: %d %s", st, raw)
	}
}
