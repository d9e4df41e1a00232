package bankapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/banking/bankingsql"
	"partnerapi/internal/storetest"
)

// payAuth maps tokens to principals until the test runs with IDENTITY's
// Authenticator (the end-to-end test in cmd/partnerapi does).
type payAuth map[string]banking.Principal

func (f payAuth) Authenticate(_ context.Context, tok string) (banking.Principal, error) {
	if p, ok := f[tok]; ok {
		return p, nil
	}
	return banking.Principal{}, banking.Errorf(banking.KindUnauthorized, "bad token")
}

// payVerifier is the sandbox policy: the certificate uuid decides. It
// keeps a copy of each digest: a create's digest is read in place from its
// pooled buffer, valid only until the verifier returns (the
// SignatureVerifier contract), and a kept alias was overwritten by later
// creates (TestPaymentsSandboxOutcomes saw a digest cut mid-rune).
type payVerifier struct{ digests []string }

func (f *payVerifier) Verify(_ context.Context, _ banking.Principal, digest string, sigs []banking.DigestSignature) (banking.SignatureSet, error) {
	f.digests = append(f.digests, strings.Clone(digest))
	var set banking.SignatureSet
	for _, s := range sigs {
		r, ok := map[string]banking.SignatureRole{
			banking.SandboxCertSole: banking.RoleSoleAuthority, banking.SandboxCertFirst: banking.RoleFirst,
			banking.SandboxCertSecond: banking.RoleSecond, banking.SandboxCertQualified: banking.RoleQualified}[s.CertificateUUID]
		if !ok || (r == banking.RoleQualified) != (s.SignType == "UKEP_UL") || set.Has(r) {
			return set, banking.Errorf(banking.KindWorkflow, "Проверьте сертификат %s", s.CertificateUUID)
		}
		set.Roles = append(set.Roles, r)
	}
	if len(sigs) > 2 || set.Has(banking.RoleSoleAuthority) && len(sigs) > 1 {
		return set, banking.Errorf(banking.KindWorkflow, "Недопустимый набор подписей")
	}
	return set, nil
}

// VerifyDocument: the fake knows no owners, so no certificate is foreign.
func (f *payVerifier) VerifyDocument(ctx context.Context, p banking.Principal, digest string, sigs []banking.DigestSignature) (banking.SignatureSet, error) {
	return f.Verify(ctx, p, digest, sigs)
}

type payAccounts map[string]string

func (a payAccounts) AccountOrg(_ context.Context, acc string) (string, bool, error) {
	org, ok := a[acc]
	return org, ok, nil
}

// payOrgINNs are the test organisations' INNs: payDoc's payer is payOrg.
var payOrgINNs = map[string]string{payOrg: "7707083893", payOrg2: "7830002293"}

// AccountHolder: every test account is at the sandbox bank.
func (a payAccounts) AccountHolder(_ context.Context, acc string) (banking.AccountHolder, bool, error) {
	org, ok := a[acc]
	return banking.AccountHolder{OrgID: org, OrgINN: payOrgINNs[org], BIC: banking.SandboxBIC, CorrAccount: banking.SandboxCorrAccount}, ok, nil
}

const (
	payOrg      = "org-pay-1"
	payOrg2     = "org-pay-2"
	otherOrgAcc = "40702810838833411734"
)

var payNow = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

type payEnv struct {
	t   *testing.T
	srv *httptest.Server
	ver *payVerifier
	svc *banking.PaymentService
}

// newPayEnv serves the payment operations over a real SQLite store; opts
// add dependencies to the server (payments_jose_test.go's JWS verifier).
func newPayEnv(t *testing.T, opts ...func(*Deps)) *payEnv {
	db := storetest.SQLite(t)
	if err := bankingsql.MigratePayments(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	ver := &payVerifier{}
	svc := &banking.PaymentService{Store: bankingsql.NewPaymentStore(db), Verifier: ver,
		Accounts: payAccounts{banking.SandboxAccount: payOrg, otherOrgAcc: payOrg2},
		Config:   banking.PaymentConfig{SigningHost: "https://sbi.example", Now: func() time.Time { return payNow }}}
	auth := payAuth{
		"pay":   {OrgID: payOrg, PartnerID: "p1", Scopes: []string{banking.ScopePayDocRU}},
		"pay2":  {OrgID: payOrg2, PartnerID: "p1", Scopes: []string{banking.ScopePayDocRU}},
		"inv":   {OrgID: payOrg, PartnerID: "p1", Scopes: []string{banking.ScopePayDocRUInvoice, banking.ScopePayDocRUInvoiceAny, banking.ScopePayDocRUInvoiceBudget}},
		"cards": {OrgID: payOrg, Scopes: []string{banking.ScopeBusinessCardLimit}},
		// One invoice scope each (payments_scopes_test.go).
		"inv-only":   {OrgID: payOrg, PartnerID: "p1", Scopes: []string{banking.ScopePayDocRUInvoice}},
		"inv-any":    {OrgID: payOrg, PartnerID: "p1", Scopes: []string{banking.ScopePayDocRUInvoiceAny}},
		"inv-budget": {OrgID: payOrg, PartnerID: "p1", Scopes: []string{banking.ScopePayDocRUInvoiceBudget}},
	}
	deps := Deps{Auth: auth, Payments: svc}
	for _, o := range opts {
		o(&deps)
	}
	srv := httptest.NewServer(NewServer(deps))
	t.Cleanup(srv.Close)
	return &payEnv{t: t, srv: srv, ver: ver, svc: svc}
}

func (e *payEnv) do(method, path, token, body string) (int, map[string]any, string) {
	e.t.Helper()
	return e.doTyped(method, path, token, "application/json", body)
}

// doTyped is do with the Content-Type of the caller's choice.
func (e *payEnv) doTyped(method, path, token, ctype, body string) (int, map[string]any, string) {
	e.t.Helper()
	req, _ := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", ctype)
	if token != "" {
		req.Header.Set("Authorization", token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return resp.StatusCode, m, string(raw)
}

// payDoc is a valid payment order of payOrg as JSON with overrides.
func payDoc(id string, over map[string]any) string {
	m := map[string]any{
		"externalId": id, "date": "2026-11-20", "amount": json.Number("1500.50"), "operationCode": "01", "priority": "5",
		"purpose": "Оплата по счёту № 1, без НДС", "payerName": "ООО Ромашка", "payerInn": "7707083893", "payerKpp": "773601001",
		"payerAccount": banking.SandboxAccount, "payerBankBic": "044525225", "payerBankCorrAccount": "30101810400000000225",
		"payeeName": "АО Лютик", "payeeInn": "7830002293", "payeeKpp": "783001001", "payeeAccount": "40602810700000000025",
		"payeeBankBic": "049805746", "payeeBankCorrAccount": "30101810800000000746",
	}
	for k, v := range over {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func sig(uuid string) map[string]any {
	m := map[string]any{"base64Encoded": "MIIB", "certificateUuid": uuid}
	if uuid == banking.SandboxCertQualified {
		m["signType"] = "UKEP_UL"
	}
	return m
}

func sigs(uuids ...string) []any {
	var out []any
	for _, u := range uuids {
		out = append(out, sig(u))
	}
	return out
}

func TestPaymentsSandboxOutcomes(t *testing.T) {
	e := newPayEnv(t)
	full := map[string]any{"drawerStatus101": "01", "kbk": "18201061201010000510", "oktmo": "45328000", "reasonCode106": "0",
		"taxPeriod107": "0", "docNumber108": "0", "docDate109": "0", "paymentKind110": "0", "uip": "0"}
	noKind := map[string]any{}
	for k, v := range full {
		noKind[k] = v
	}
	noKind["paymentKind110"] = nil
	onlyKind := map[string]any{"drawerStatus101": nil, "kbk": nil, "oktmo": nil, "reasonCode106": nil, "taxPeriod107": nil,
		"docNumber108": nil, "docDate109": nil, "paymentKind110": "0", "uip": nil}
	for i, tc := range []struct {
		name    string
		over    map[string]any
		status  string
		comment string
	}{
		{"no signatures: draft", nil, banking.StatusCreated, ""},
		{"sole", map[string]any{"digestSignatures": sigs(banking.SandboxCertSole)}, banking.StatusImplemented, ""},
		{"first and second", map[string]any{"digestSignatures": sigs(banking.SandboxCertFirst, banking.SandboxCertSecond)}, banking.StatusImplemented, ""},
		{"second and first", map[string]any{"digestSignatures": sigs(banking.SandboxCertSecond, banking.SandboxCertFirst)}, banking.StatusImplemented, ""},
		{"first only", map[string]any{"digestSignatures": sigs(banking.SandboxCertFirst)}, banking.StatusPartSigned, ""},
		{"second only", map[string]any{"digestSignatures": sigs(banking.SandboxCertSecond)}, banking.StatusPartSigned, ""},
		{"qualified", map[string]any{"digestSignatures": sigs(banking.SandboxCertQualified)}, banking.StatusImplemented, ""},
		{"departmentalInfo all members", map[string]any{"departmentalInfo": full}, banking.StatusCreated, ""},
		{"departmentalInfo all but 110", map[string]any{"departmentalInfo": noKind}, banking.StatusCreated, ""},
		{"departmentalInfo only 110", map[string]any{"departmentalInfo": onlyKind}, banking.StatusCreated, ""},
		{"departmentalInfo null", map[string]any{"departmentalInfo": nil}, banking.StatusCreated, ""},
		{"departmentalInfo malformed kbk", map[string]any{"departmentalInfo": map[string]any{"drawerStatus101": "01", "kbk": "123"},
			"digestSignatures": sigs(banking.SandboxCertSole)}, banking.StatusCheckError, "departmentalInfo.kbk"},
		{"departmentalInfo malformed uip", map[string]any{"departmentalInfo": map[string]any{"uip": "18210102010011000110"}}, banking.StatusCheckError, "departmentalInfo.uip"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := newUUID(100 + i)
			st, m, raw := e.do("POST", paymentsBase, "pay", payDoc(id, tc.over))
			if st != http.StatusCreated || m["bankStatus"] != tc.status {
				t.Fatalf("status %d body %s, want 201 %s", st, raw, tc.status)
			}
			if tc.comment != "" && !strings.Contains(m["bankComment"].(string), tc.comment) {
				t.Fatalf("bankComment %q does not name %s", m["bankComment"], tc.comment)
			}
			if m["amount"] != 1500.5 || m["digestSignatures"] != nil || m["crucialFieldsHash"] == "" {
				t.Fatalf("body %s", raw)
			}
			// GET and /state agree with the create response.
			st, g, _ := e.do("GET", paymentsBase+"/"+id, "pay", "")
			if st != 200 || g["bankStatus"] != tc.status || g["externalId"] != id {
				t.Fatalf("get %d %v", st, g)
			}
			st, s, _ := e.do("GET", paymentsBase+"/"+id+"/state", "pay", "")
			if st != 200 || s["bankStatus"] != tc.status || s["channelInfo"] != "API:p1" || s["crucialFieldsHash"] != m["crucialFieldsHash"] {
				t.Fatalf("state %d %v", st, s)
			}
		})
	}
	if len(e.ver.digests) == 0 || strings.Count(e.ver.digests[0], "\n") != 27 {
		t.Fatalf("verifier saw no 28-line digest: %q", e.ver.digests)
	}
}

func TestPaymentsErrors(t *testing.T) {
	e := newPayEnv(t)
	dupID := "20000000-0000-4000-8000-000000000001"
	if st, _, raw := e.do("POST", paymentsBase, "pay", payDoc(dupID, nil)); st != 201 {
		t.Fatal(raw)
	}
	for _, tc := range []struct {
		name, token, body string
		status            int
		cause             string
		field             string // fieldNames (validation) or fields (deserialization)
	}{
		{"no token", "", payDoc(newUUID(3), nil), 401, "UNAUTHORIZED", ""},
		{"bad token", "nope", payDoc(newUUID(4), nil), 401, "UNAUTHORIZED", ""},
		{"wrong scope", "cards", payDoc(newUUID(5), nil), 403, "ACTION_ACCESS_EXCEPTION", ""},
		{"bad json", "pay", `{"externalId":`, 400, "DESERIALIZATION_FAULT", ""},
		{"amount as string", "pay", payDoc(newUUID(6), map[string]any{"amount": "100"}), 400, "DESERIALIZATION_FAULT", "amount"},
		{"purpose as number", "pay", payDoc(newUUID(7), map[string]any{"purpose": 5}), 400, "DESERIALIZATION_FAULT", "purpose"},
		{"kbk as number", "pay", payDoc(newUUID(8), map[string]any{"departmentalInfo": map[string]any{"kbk": 1}}), 400, "DESERIALIZATION_FAULT", "departmentalInfo.kbk"},
		{"inn shape", "pay", payDoc(newUUID(9), map[string]any{"payerInn": "770708389"}), 400, "VALIDATION_FAULT", "payerInn"},
		{"account shape", "pay", payDoc(newUUID(10), map[string]any{"payeeAccount": "4060281080000000002"}), 400, "VALIDATION_FAULT", "payeeAccount"},
		{"priority 7", "pay", payDoc(newUUID(11), map[string]any{"priority": "7"}), 400, "VALIDATION_FAULT", "priority"},
		{"amount 3 decimals", "pay", payDoc(newUUID(12), map[string]any{"amount": json.Number("1.005")}), 400, "VALIDATION_FAULT", "amount"},
		{"amount negative", "pay", payDoc(newUUID(13), map[string]any{"amount": json.Number("-1")}), 400, "VALIDATION_FAULT", "amount"},
		{"purpose 211", "pay", payDoc(newUUID(14), map[string]any{"purpose": strings.Repeat("я", 211)}), 400, "VALIDATION_FAULT", "purpose"},
		{"missing payee bic", "pay", payDoc(newUUID(15), map[string]any{"payeeBankBic": nil}), 400, "VALIDATION_FAULT", "payeeBankBic"},
		{"unknown payer account", "pay", payDoc(newUUID(16), map[string]any{"payerAccount": "40702810400000000005"}), 400, "WORKFLOW_FAULT", ""},
		{"account of another org", "pay", payDoc(newUUID(17), map[string]any{"payerAccount": otherOrgAcc}), 400, "WORKFLOW_FAULT", ""},
		// The payer's details are the organisation's and its account's bank
		// (reference §13: unknown org/account/bank details); each answer
		// names the field in its message.
		{"payer inn of another org", "pay", payDoc(newUUID(21), map[string]any{"payerInn": "7830002293"}), 400, "WORKFLOW_FAULT", "payerInn"},
		{"payer inn of a person", "pay", payDoc(newUUID(22), map[string]any{"payerInn": "500100732259", "payerKpp": nil}), 400, "WORKFLOW_FAULT", "payerInn"},
		// Another bank whose BIC ends as the sandbox bank's, so the account's
		// control key holds against it and only the comparison tells.
		{"payer bank of another bank", "pay", payDoc(newUUID(23), map[string]any{"payerBankBic": "045004225",
			"payerBankCorrAccount": "30101810900000000225"}), 400, "WORKFLOW_FAULT", "payerBankBic"},
		{"payer corr account of another bank", "pay", payDoc(newUUID(24), map[string]any{"payerBankCorrAccount": "30101810200000000593"}), 400, "WORKFLOW_FAULT", "payerBankCorrAccount"},
		{"payer inn signed", "pay", payDoc(newUUID(25), map[string]any{"payerInn": "7830002293", "digestSignatures": sigs(banking.SandboxCertSole)}), 400, "WORKFLOW_FAULT", "payerInn"},
		{"duplicate externalId", "pay", payDoc(dupID, nil), 400, "WORKFLOW_FAULT", ""},
		{"unknown certificate", "pay", payDoc(newUUID(18), map[string]any{"digestSignatures": sigs("11111111-1111-4111-8111-111111111111")}), 400, "WORKFLOW_FAULT", ""},
		{"sole with first", "pay", payDoc(newUUID(19), map[string]any{"digestSignatures": sigs(banking.SandboxCertSole, banking.SandboxCertFirst)}), 400, "WORKFLOW_FAULT", ""},
		{"three signatures", "pay", payDoc(newUUID(20), map[string]any{"digestSignatures": sigs(banking.SandboxCertFirst, banking.SandboxCertSecond, banking.SandboxCertSole)}), 400, "WORKFLOW_FAULT", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, m, raw := e.do("POST", paymentsBase, tc.token, tc.body)
			if st != tc.status || m["cause"] != tc.cause || m["referenceId"] == "" || m["message"] == "" {
				t.Fatalf("got %d %s, want %d %s", st, raw, tc.status, tc.cause)
			}
			if tc.field != "" && tc.cause == "WORKFLOW_FAULT" {
				if !strings.Contains(m["message"].(string), "("+tc.field+")") {
					t.Fatalf("message %q does not name %s", m["message"], tc.field)
				}
			} else if tc.field != "" {
				key := "fieldNames"
				if tc.cause == "DESERIALIZATION_FAULT" {
					key = "fields"
				}
				list, _ := m[key].([]any)
				if !slices.Contains(list, any(tc.field)) {
					t.Fatalf("%s = %v, want %s", key, m[key], tc.field)
				}
				if key == "fieldNames" && len(m["checks"].([]any)) != len(list) {
					t.Fatalf("checks not parallel: %s", raw)
				}
			}
		})
	}
	// Another organisation never sees the document.
	for _, p := range []string{"", "/state", "/digest"} {
		if st, m, _ := e.do("GET", paymentsBase+"/"+dupID+p, "pay2", ""); st != 404 || m["cause"] != "DATA_NOT_FOUND_EXCEPTION" {
			t.Fatalf("GET%s by other org: %d %v", p, st, m)
		}
	}
	if st, m, _ := e.do("GET", paymentsBase+"/"+newUUID(99), "pay", ""); st != 404 || m["cause"] != "DATA_NOT_FOUND_EXCEPTION" {
		t.Fatalf("unknown id: %d %v", st, m)
	}
}

func newUUID(n int) string {
	d := []byte("000000000000")
	for i := len(d) - 1; n > 0 && i >= 0; i-- {
		d[i] = byte('0' + n%10)
		n /= 10
	}
	return "30000000-0000-4000-8000-" + string(d)
}

func TestPaymentDigestEndpoint(t *testing.T) {
	e := newPayEnv(t)
	id := newUUID(1)
	e.do("POST", paymentsBase, "pay", payDoc(id, nil))
	st, _, raw := e.do("GET", paymentsBase+"/"+id+"/digest", "pay", "")
	var d banking.Payment
	_ = json.Unmarshal([]byte(payDoc(id, nil)), &d)
	if st != 200 || raw != banking.PaymentDigest(&d) || !strings.HasPrefix(raw, "amount=1500.50\ndate=2026-11-20\n") {
		t.Fatalf("digest %d %q", st, raw)
	}
}

func TestPaymentsSignLater(t *testing.T) {
	e := newPayEnv(t)
	id := newUUID(2)
	if st, m, _ := e.do("POST", paymentsBase, "pay", payDoc(id, nil)); st != 201 || m["bankStatus"] != "CREATED" {
		t.Fatal(m)
	}
	sign := func(uuids ...string) (int, map[string]any) {
		b, _ := json.Marshal(map[string]any{"digestSignatures": sigs(uuids...)})
		st, m, _ := e.do("POST", paymentsBase+"/"+id+"/sign", "pay", string(b))
		return st, m
	}
	if st, m := sign(banking.SandboxCertFirst); st != 200 || m["bankStatus"] != "PARTSIGNED" {
		t.Fatalf("first: %d %v", st, m)
	}
	if st, m := sign(banking.SandboxCertFirst); st != 400 || m["cause"] != "WORKFLOW_FAULT" {
		t.Fatalf("first twice: %d %v", st, m)
	}
	if st, m := sign(banking.SandboxCertSole); st != 400 || m["cause"] != "WORKFLOW_FAULT" {
		t.Fatalf("sole after first: %d %v", st, m)
	}
	if st, m := sign(banking.SandboxCertSecond); st != 200 || m["bankStatus"] != "IMPLEMENTED" {
		t.Fatalf("second: %d %v", st, m)
	}
	if st, m := sign(banking.SandboxCertSole); st != 400 || m["cause"] != "WORKFLOW_FAULT" {
		t.Fatalf("sign an executed document: %d %v", st, m)
	}
	if st, m, _ := e.do("POST", paymentsBase+"/"+id+"/sign", "pay2", `{"digestSignatures":[{"certificateUuid":"`+banking.SandboxCertSole+`"}]}`); st != 404 || m["cause"] != "DATA_NOT_FOUND_EXCEPTION" {
		t.Fatalf("other org signs: %d %v", st, m)
	}
	// Every move is recorded with its time.
	h, err := e.svc.History(context.Background(), banking.Principal{OrgID: payOrg}, id)
	if err != nil {
		t.Fatal(err)
	}
	var seq []string
	for _, c := range h {
		if !c.At.Equal(payNow) {
			t.Fatalf("move without time: %+v", c)
		}
		seq = append(seq, c.Status)
	}
	want := append([]string{"CREATED", "PARTSIGNED"}, banking.ProcessingPath...)
	if !slices.Equal(seq, want) {
		t.Fatalf("history %v, want %v", seq, want)
	}
}

func TestPaymentsInvoiceDrafts(t *testing.T) {
	e := newPayEnv(t)
	inv := func(id, date string, over map[string]any) string {
		m := map[string]any{"externalId": id, "amount": json.Number("99.9"), "date": date, "purpose": "Счёт 7",
			"payeeAccount": banking.SandboxAccount, "priority": "5"}
		for k, v := range over {
			m[k] = v
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	anyExtra := map[string]any{"isPaidByCredit": false, "payeeBankBic": "044525225", "payeeInn": "7707083893", "payeeName": "ООО Ромашка"}
	// A third party's account at another bank, its control key right.
	thirdParty := map[string]any{"isPaidByCredit": false, "payeeBankBic": "044525593", "payeeBankCorrAccount": "30101810200000000593",
		"payeeAccount": "40702810600000000777", "payeeInn": "7830002293", "payeeName": "АО Лютик"}
	// The single tax payment's payee (§5.8): the treasury account at the
	// treasury's BIC.
	budgetExtra := map[string]any{"payeeName": "Казначейство России (ФНС России)", "payeeInn": "7727406020", "payeeKpp": "770701001",
		"payeeAccount": "03100643000000018500", "payeeBankBic": "017003983", "payeeBankCorrAccount": "40102810445370000059",
		"departmentalInfo": map[string]any{"drawerStatus101": "01", "kbk": "18201061201010000510", "oktmo": "0"}}
	budgetOwn := merge(budgetExtra, map[string]any{"payeeAccount": banking.SandboxAccount, "payeeBankBic": "044525225",
		"payeeBankCorrAccount": "30101810400000000225"})
	for _, tc := range []struct {
		name, path, token, body string
		status                  int
		bank                    string
		cause                   string
	}{
		{"from-invoice-any to a third party", "/from-invoice-any", "inv", inv(newUUID(51), "2026-11-22", thirdParty), 201, "CREATED", ""},
		{"from-invoice-any to another org of the bank", "/from-invoice-any", "inv", inv(newUUID(52), "2026-11-22",
			merge(anyExtra, map[string]any{"payeeAccount": otherOrgAcc})), 201, "CREATED", ""},
		{"from-invoice to a third party", "/from-invoice", "inv", inv(newUUID(53), "2026-11-22", map[string]any{"payeeAccount": "40702810600000000777"}), 400, "", "WORKFLOW_FAULT"},
		// A treasury BIC (§5.3: 0 but not 04) banks budget payees alone.
		{"from-invoice-any to a treasury BIC", "/from-invoice-any", "inv", inv(newUUID(55), "2026-11-22", merge(thirdParty,
			map[string]any{"payeeBankBic": "004525988", "payeeBankCorrAccount": "30101810400000000225", "payeeAccount": "40702810200000000777"})), 201, "CHECKERROR", ""},
		{"from-invoice-budget misrouted to an ordinary account", "/from-invoice-budget", "inv", inv(newUUID(54), "2026-11-22", budgetOwn), 201, "CHECKERROR", ""},
		// A budget draft pays into the budget by its kind (§4.1): a block of
		// nulls names no drawer status, and status 08, whose routing leaves
		// the payee open, still needs a budget payee.
		{"from-invoice-budget with an empty departmentalInfo", "/from-invoice-budget", "inv", inv(newUUID(56), "2026-11-22",
			merge(budgetExtra, map[string]any{"departmentalInfo": map[string]any{}})), 201, "CHECKERROR", ""},
		{"from-invoice-budget status 08 to a third party", "/from-invoice-budget", "inv", inv(newUUID(57), "2026-11-22",
			merge(thirdParty, map[string]any{"departmentalInfo": map[string]any{"drawerStatus101": "08", "kbk": "18210202010061010160", "oktmo": "45328000"}})),
			201, "CHECKERROR", ""},
		{"from-invoice", "/from-invoice", "inv", inv(newUUID(40), "2026-11-22", nil), 201, "CREATED", ""},
		{"from-invoice +9 days", "/from-invoice", "inv", inv(newUUID(41), "2026-12-01", nil), 201, "CREATED", ""},
		{"from-invoice +10 days", "/from-invoice", "inv", inv(newUUID(42), "2026-12-02", nil), 201, "CHECKERROR", ""},
		{"from-invoice-any", "/from-invoice-any", "inv", inv(newUUID(43), "2026-11-22", anyExtra), 201, "CREATED", ""},
		{"from-invoice-any +10 days", "/from-invoice-any", "inv", inv(newUUID(44), "2026-12-02", anyExtra), 201, "CHECKERROR", ""},
		{"from-invoice-any missing isPaidByCredit", "/from-invoice-any", "inv", inv(newUUID(45), "2026-11-22", map[string]any{"payeeBankBic": "044525225", "payeeInn": "7707083893", "payeeName": "x"}), 400, "", "VALIDATION_FAULT"},
		{"from-invoice-budget", "/from-invoice-budget", "inv", inv(newUUID(46), "2026-11-22", budgetExtra), 201, "CREATED", ""},
		{"from-invoice-budget without departmentalInfo", "/from-invoice-budget", "inv", inv(newUUID(47), "2026-11-22", anyExtra), 400, "", "VALIDATION_FAULT"},
		{"payee account of another org", "/from-invoice", "inv", inv(newUUID(48), "2026-11-22", map[string]any{"payeeAccount": otherOrgAcc}), 400, "", "WORKFLOW_FAULT"},
		{"priority 3", "/from-invoice", "inv", inv(newUUID(49), "2026-11-22", map[string]any{"priority": "3"}), 400, "", "VALIDATION_FAULT"},
		{"wrong scope", "/from-invoice", "pay", inv(newUUID(50), "2026-11-22", nil), 403, "", "ACTION_ACCESS_EXCEPTION"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, m, raw := e.do("POST", paymentsBase+tc.path+"?backUrl=https://partner.example/back", tc.token, tc.body)
			if st != tc.status || (tc.bank != "" && m["bankStatus"] != tc.bank) || (tc.cause != "" && m["cause"] != tc.cause) {
				t.Fatalf("got %d %s", st, raw)
			}
			if st == 201 {
				id := m["externalId"].(string)
				want := "https://sbi.example/ic/ufs/rpp-light/index.html#/payment-creator/" + id + "?backUrl=https%3A%2F%2Fpartner.example%2Fback"
				if m["signingUrl"] != want {
					t.Fatalf("signingUrl %v, want %s", m["signingUrl"], want)
				}
				if st, s, _ := e.do("GET", paymentsBase+"/"+id+"/state", "inv", ""); st != 200 || s["bankStatus"] != tc.bank {
					t.Fatalf("state %d %v", st, s)
				}
				// Reading the document itself takes PAY_DOC_RU; the invoice
				// scopes read only its state (reference §2).
				if st, g, _ := e.do("GET", paymentsBase+"/"+id, "inv", ""); st != 403 || g["cause"] != "ACTION_ACCESS_EXCEPTION" {
					t.Fatalf("get with an invoice scope: %d %v", st, g)
				}
				if st, g, _ := e.do("GET", paymentsBase+"/"+id, "pay", ""); st != 200 || g["bankStatus"] != tc.bank {
					t.Fatalf("get with PAY_DOC_RU: %d %v", st, g)
				}
			}
		})
	}
}

func TestPaymentsQRConfirmation(t *testing.T) {
	e := newPayEnv(t)
	draft, done := newUUID(60), newUUID(61)
	e.do("POST", paymentsBase, "pay", payDoc(draft, nil))
	e.do("POST", paymentsBase, "pay", payDoc(done, map[string]any{"digestSignatures": sigs(banking.SandboxCertSole)}))
	qr := func(ids ...string) string {
		b, _ := json.Marshal(map[string]any{"externalDocIds": ids})
		return string(b)
	}
	for _, tc := range []struct {
		name, body string
		status     int
		cause      string
	}{
		{"sandbox success", qr(banking.QRSandboxOK), 201, ""},
		{"own draft", qr(draft, banking.QRSandboxOK), 201, ""},
		{"not OTP", qr(banking.QRSandboxNotOTP), 400, "WORKFLOW_FAULT"},
		{"wrong status prefix", qr("998be1fd-4e89-4a30-8000-000000000000"), 400, "WORKFLOW_FAULT"},
		{"executed document", qr(done), 400, "WORKFLOW_FAULT"},
		{"unknown", qr(newUUID(62)), 404, "DATA_NOT_FOUND_EXCEPTION"},
		{"six documents", qr(draft, draft, draft, draft, draft, draft), 400, "VALIDATION_FAULT"},
		{"none", qr(), 400, "VALIDATION_FAULT"},
		{"ids as number", `{"externalDocIds":5}`, 400, "DESERIALIZATION_FAULT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, m, raw := e.do("POST", paymentsBase+"/qr-confirmation", "pay", tc.body)
			if st != tc.status || (tc.cause != "" && m["cause"] != tc.cause) {
				t.Fatalf("got %d %s", st, raw)
			}
			if st == 201 && !strings.HasPrefix(m["qrCode"].(string), "sbbol-qr:") {
				t.Fatalf("qr %s", raw)
			}
		})
	}
	// Another organisation's draft is unknown to this one.
	if st, m, _ := e.do("POST", paymentsBase+"/qr-confirmation", "pay2", qr(draft)); st != 404 || m["cause"] != "DATA_NOT_FOUND_EXCEPTION" {
		t.Fatalf("other org: %d %v", st, m)
	}
}
