package banking

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// memPayments is a PaymentStore in memory for the service's own tests (the
// SQL stores have their conformance suites in bankingsql).
type memPayments struct {
	mu      sync.Mutex
	docs    map[string]*StoredPayment
	history map[string][]StatusChange
}

func newMemPayments() *memPayments {
	return &memPayments{docs: map[string]*StoredPayment{}, history: map[string][]StatusChange{}}
}

func (m *memPayments) CreatePayment(_ context.Context, sp *StoredPayment, history []StatusChange) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := sp.OrgID + "/" + sp.Doc.ExternalID
	if _, dup := m.docs[key]; dup {
		return Errorf(KindWorkflow, "duplicate")
	}
	c := *sp
	m.docs[key], m.history[key] = &c, history
	return nil
}

func (m *memPayments) GetPayment(_ context.Context, orgID, externalID string) (*StoredPayment, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	sp, ok := m.docs[orgID+"/"+externalID]
	if !ok {
		return nil, Errorf(KindDataNotFound, "not found")
	}
	c := *sp
	return &c, nil
}

func (m *memPayments) AdvancePayment(_ context.Context, orgID, externalID, from string, roles []SignatureRole, history []StatusChange) (*StoredPayment, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := orgID + "/" + externalID
	sp, ok := m.docs[key]
	if !ok {
		return nil, Errorf(KindDataNotFound, "not found")
	}
	if sp.Status != from {
		return nil, Errorf(KindWorkflow, "moved on")
	}
	last := history[len(history)-1]
	sp.Status, sp.Comment, sp.Roles = last.Status, last.Comment, roles
	m.history[key] = append(m.history[key], history...)
	c := *sp
	return &c, nil
}

// AdvancePaymentDoc is AdvancePayment replacing the document with doc.
func (m *memPayments) AdvancePaymentDoc(ctx context.Context, orgID, externalID, from string, doc []byte, roles []SignatureRole, history []StatusChange) (*StoredPayment, error) {
	var d Payment
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, err
	}
	sp, err := m.AdvancePayment(ctx, orgID, externalID, from, roles, history)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.docs[orgID+"/"+externalID].Doc = d
	sp.Doc = d
	return sp, nil
}

// DeletePayment moves a deletable document to DELETED, as the SQL stores
// do under their conditional update.
func (m *memPayments) DeletePayment(_ context.Context, orgID, externalID, comment string, at time.Time) (*StoredPayment, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := orgID + "/" + externalID
	sp, ok := m.docs[key]
	if !ok {
		return nil, Errorf(KindDataNotFound, "not found")
	}
	if !Deletable(sp.Status) {
		return nil, NotDeletable(externalID, sp.Status)
	}
	sp.Status, sp.Comment, sp.UpdatedAt = StatusDeleted, comment, at
	m.history[key] = append(m.history[key], StatusChange{Status: StatusDeleted, Comment: comment, At: at})
	c := *sp
	return &c, nil
}

func (m *memPayments) PaymentHistory(_ context.Context, orgID, externalID string) ([]StatusChange, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.history[orgID+"/"+externalID], nil
}

// soleVerifier accepts the sandbox certificates by uuid, as the sandbox does.
type soleVerifier struct{}

func (soleVerifier) Verify(_ context.Context, _ Principal, _ string, sigs []DigestSignature) (SignatureSet, error) {
	var set SignatureSet
	for _, s := range sigs {
		r, ok := SandboxCertRoles[s.CertificateUUID]
		if !ok {
			return set, Errorf(KindWorkflow, "unknown certificate")
		}
		set.Roles = append(set.Roles, r)
	}
	return set, nil
}

func (v soleVerifier) VerifyDocument(ctx context.Context, p Principal, digest string, sigs []DigestSignature) (SignatureSet, error) {
	return v.Verify(ctx, p, digest, sigs)
}

// svcNow is the service clock of these tests.
var svcNow = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// newTestPayments is a payment service of the sandbox organisation over
// memory, its identity store holding the sandbox seed's organisation and
// accounts plus another organisation's account at the same bank.
func newTestPayments(t *testing.T) (*PaymentService, Principal) {
	t.Helper()
	ids := newMemIdentity()
	ids.orgs[SandboxOrgID] = Organisation{ID: SandboxOrgID, Name: "ООО «Песочница»", INN: SandboxOrgINN, KPP: SandboxOrgKPP}
	ids.orgs["org-2"] = Organisation{ID: "org-2", Name: "АО Другое", INN: "7830002293"}
	for _, a := range []Account{
		{Number: SandboxAccount, OrgID: SandboxOrgID, BIC: SandboxBIC, CorrAccount: SandboxCorrAccount},
		{Number: SandboxAccount2, OrgID: "org-2", BIC: SandboxBIC, CorrAccount: SandboxCorrAccount},
	} {
		ids.accounts[a.Number] = a
	}
	svc := &PaymentService{Store: newMemPayments(), Accounts: IdentityAccounts{Store: ids}, Verifier: soleVerifier{},
		Config: PaymentConfig{Now: func() time.Time { return svcNow }}}
	return svc, Principal{OrgID: SandboxOrgID, PartnerID: "p1"}
}

// memIdentity answers the identity store's organisation and account reads;
// the other methods are not used by the payment service.
type memIdentity struct {
	IdentityStore
	orgs     map[string]Organisation
	accounts map[string]Account
}

func newMemIdentity() *memIdentity {
	return &memIdentity{orgs: map[string]Organisation{}, accounts: map[string]Account{}}
}

func (m *memIdentity) GetOrg(_ context.Context, id string) (Organisation, error) {
	o, ok := m.orgs[id]
	if !ok {
		return o, ErrNotFound
	}
	return o, nil
}

func (m *memIdentity) GetAccount(_ context.Context, number string) (Account, error) {
	a, ok := m.accounts[number]
	if !ok {
		return a, ErrNotFound
	}
	return a, nil
}

// enpDraftPayee is the payee of a single tax payment (§5.8) for a budget
// invoice draft dated after 2025-12-05.
func enpDraftPayee(d *Payment) {
	d.PayeeName, d.PayeeINN, d.PayeeKPP = "Казначейство России (ФНС России)", ENPPayeeINN, enpPayeeKPPNew
	d.PayeeAccount, d.PayeeBankBIC, d.PayeeBankCorrAccount = ENPPayeeAccount, ENPPayeeBIC, ENPPayeeCorrAcc
	d.DepartmentalInfo = &DepartmentalInfo{DrawerStatus101: "01", KBK: ENPKBK, OKTMO: "0", ReasonCode106: "0",
		TaxPeriod107: "0", DocNumber108: "0", DocDate109: "0", UIP: "0"}
}

// Only a draft from the requester's own invoice must name one of its
// accounts as payee (§4.1); -any drafts pay a third party, -budget drafts
// the treasury, whose payee is checked by the budget rules instead.
func TestCreateInvoicePayeeByKind(t *testing.T) {
	no := false
	base := func(id string) Payment {
		return Payment{ExternalID: id, Amount: "99.90", Date: "2026-11-22", Purpose: "Счёт 7", Priority: "5", PayeeAccount: SandboxAccount}
	}
	thirdParty := func(d *Payment) {
		d.IsPaidByCredit = &no
		d.PayeeName, d.PayeeINN = "АО Лютик", "7830002293"
		d.PayeeAccount, d.PayeeBankBIC, d.PayeeBankCorrAccount = "40702810600000000777", "044525593", "30101810200000000593"
	}
	for i, tc := range []struct {
		name    string
		kind    DocKind
		edit    func(*Payment)
		status  string
		comment string // a field the bankComment names
		refused bool   // WORKFLOW_FAULT instead of a document
	}{
		{"own invoice", KindInvoice, nil, StatusCreated, "", false},
		{"own invoice to another org's account", KindInvoice, func(d *Payment) { d.PayeeAccount = SandboxAccount2 }, "", "", true},
		{"own invoice to an account elsewhere", KindInvoice, thirdParty, "", "", true},
		{"any payee at another bank", KindInvoiceAny, thirdParty, StatusCreated, "", false},
		{"any payee: another org of the bank", KindInvoiceAny, func(d *Payment) {
			thirdParty(d)
			d.PayeeAccount, d.PayeeBankBIC, d.PayeeBankCorrAccount = SandboxAccount2, SandboxBIC, SandboxCorrAccount
		}, StatusCreated, "", false},
		{"any payee with a wrong account key", KindInvoiceAny, func(d *Payment) {
			thirdParty(d)
			d.PayeeAccount = "40702810700000000777"
		}, StatusCheckError, "payeeAccount", false},
		{"budget: ЕНП", KindInvoiceBudget, enpDraftPayee, StatusCreated, "", false},
		{"budget: status 13 without a payer yet", KindInvoiceBudget, func(d *Payment) {
			enpDraftPayee(d)
			d.DepartmentalInfo.DrawerStatus101 = "13"
		}, StatusCreated, "", false},
		{"budget: ЕНП to the old KPP", KindInvoiceBudget, func(d *Payment) {
			enpDraftPayee(d)
			d.PayeeKPP = enpPayeeKPPOld
		}, StatusCheckError, "payeeKpp", false},
		{"budget: to an ordinary account", KindInvoiceBudget, func(d *Payment) {
			enpDraftPayee(d)
			d.PayeeAccount, d.PayeeBankBIC, d.PayeeBankCorrAccount = SandboxAccount, SandboxBIC, SandboxCorrAccount
		}, StatusCheckError, "payeeAccount", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc, p := newTestPayments(t)
			d := base("6a000000-0000-4000-8000-00000000000" + itoa(i%10))
			if tc.edit != nil {
				tc.edit(&d)
			}
			got, err := svc.CreateInvoice(context.Background(), p, tc.kind, d)
			if tc.refused {
				if KindOf(err) != KindWorkflow {
					t.Fatalf("got %v, want a workflow fault", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.BankStatus != tc.status || !strings.Contains(string(got.BankComment), tc.comment) {
				t.Fatalf("status %s comment %q, want %s naming %q", got.BankStatus, got.BankComment, tc.status, tc.comment)
			}
		})
	}
	// Switched off, the budget rules pass the misrouted draft as they pass
	// a misrouted budget payment.
	svc, p := newTestPayments(t)
	svc.Config.SkipBudgetRules = true
	d := base("6a000000-0000-4000-8000-000000000100")
	enpDraftPayee(&d)
	d.PayeeAccount, d.PayeeBankBIC, d.PayeeBankCorrAccount = SandboxAccount, SandboxBIC, SandboxCorrAccount
	if got, err := svc.CreateInvoice(context.Background(), p, KindInvoiceBudget, d); err != nil || got.BankStatus != StatusCreated {
		t.Fatalf("rules off: %v %v", got, err)
	}
}

// payOrder is a valid unsigned payment order of the sandbox organisation,
// its payer details the organisation's and its account's.
func payOrder(id, date string) Payment {
	return Payment{ExternalID: id, Date: date, Amount: "1500.50", OperationCode: "01", Priority: "5",
		Purpose: "Оплата по счёту № 1, без НДС", PayerName: "ООО Песочница", PayerINN: SandboxOrgINN, PayerKPP: SandboxOrgKPP,
		PayerAccount: SandboxAccount, PayerBankBIC: SandboxBIC, PayerBankCorrAccount: SandboxCorrAccount,
		PayeeName: "АО Лютик", PayeeINN: "7830002293", PayeeAccount: "40602810700000000025", PayeeBankBIC: "049805746",
		PayeeBankCorrAccount: "30101810800000000746"}
}

// The sandbox's future-date rule (§5.6) holds for payment orders as for
// invoice drafts: from CheckErrorDaysAhead days ahead a document is stored
// in CHECKERROR naming date, a signed one too, so it is never executed.
func TestCreateFutureDate(t *testing.T) {
	sole := []DigestSignature{{Base64Encoded: "MIIB", CertificateUUID: SandboxCertSole}}
	for i, tc := range []struct {
		days   int
		date   string
		sigs   []DigestSignature
		status string
	}{
		{0, "2026-12-01", nil, StatusCreated},
		{0, "2026-12-01", sole, StatusImplemented},
		{0, "2026-12-02", nil, StatusCheckError},
		{0, "2026-12-02", sole, StatusCheckError},
		{5, "2026-11-26", sole, StatusImplemented},
		{5, "2026-11-27", sole, StatusCheckError},
		{-1, "2027-06-01", sole, StatusImplemented},
	} {
		svc, p := newTestPayments(t)
		svc.Config.CheckErrorDaysAhead = tc.days
		d := payOrder("6b000000-0000-4000-8000-00000000000"+itoa(i), tc.date)
		d.DigestSignatures = tc.sigs
		got, err := svc.Create(context.Background(), p, d)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if got.BankStatus != tc.status || (tc.status == StatusCheckError) != strings.HasPrefix(string(got.BankComment), "Ошибка в поле date: ") {
			t.Fatalf("case %d: %s %q, want %s", i, got.BankStatus, got.BankComment, tc.status)
		}
	}
}

// A payment order's payer details must be what the bank knows of the
// organisation and the payer account (§13: unknown org/account/bank
// details are a WORKFLOW_FAULT), each refusal naming its field; the name is
// not compared, nor a budget payment's payer INN (paid for a third party),
// nor the details of a document that failed its own checks (it is stored in
// CHECKERROR for them).
func TestCreatePayerDetails(t *testing.T) {
	for i, tc := range []struct {
		name   string
		edit   func(*Payment)
		field  string // refused naming it; "" stored
		status string
	}{
		{"consistent", nil, "", StatusCreated},
		{"another name form", func(d *Payment) {
			d.PayerName = "Общество с ограниченной ответственностью «Песочница»"
		}, "", StatusCreated},
		{"another org's inn", func(d *Payment) { d.PayerINN = "7830002293" }, "payerInn", ""},
		{"another bank's bic", func(d *Payment) { d.PayerBankBIC, d.PayerBankCorrAccount = "045004225", "30101810900000000225" }, "payerBankBic", ""},
		{"another corr account", func(d *Payment) { d.PayerBankCorrAccount = "30101810200000000593" }, "payerBankCorrAccount", ""},
		{"another org's account", func(d *Payment) { d.PayerAccount = SandboxAccount2 }, "payerAccount", ""},
		{"unknown account", func(d *Payment) { d.PayerAccount = "40702810200000012345" }, "payerAccount", ""},
		{"inn with a wrong check digit", func(d *Payment) { d.PayerINN = "7707083894" }, "", StatusCheckError},
		{"budget payment for a person without inn", func(d *Payment) {
			d.PayerINN, d.PayerKPP = "0", "0"
			enpDraftPayee(d)
			d.DepartmentalInfo.DrawerStatus101, d.DepartmentalInfo.UIP = "13", "18210102010011000116"
		}, "", StatusCreated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc, p := newTestPayments(t)
			d := payOrder("6c000000-0000-4000-8000-00000000000"+itoa(i), "2026-11-22")
			if tc.edit != nil {
				tc.edit(&d)
			}
			got, err := svc.Create(context.Background(), p, d)
			if tc.field != "" {
				if KindOf(err) != KindWorkflow || !strings.Contains(err.Error(), "("+tc.field+")") {
					t.Fatalf("got %v, want a workflow fault naming %s", err, tc.field)
				}
				return
			}
			if err != nil || got.BankStatus != tc.status {
				t.Fatalf("got %v %v, want %s", got, err, tc.status)
			}
		})
	}
}

// An invoice draft keeps its linkedDocs through the stored encoding and
// refuses a docExtId that is not a UUID, naming the element.
func TestCreateInvoiceLinkedDocs(t *testing.T) {
	svc, p := newTestPayments(t)
	d := Payment{ExternalID: "6d000000-0000-4000-8000-000000000001", Amount: "99.90", Date: "2026-11-22", Priority: "5",
		PayeeAccount: SandboxAccount, LinkedDocs: []LinkedDoc{{DocExtID: "6d000000-0000-4000-8000-0000000000d1", Type: "INVOICE"},
			{DocExtID: "6d000000-0000-4000-8000-0000000000d2"}}}
	got, err := svc.CreateInvoice(context.Background(), p, KindInvoice, d)
	if err != nil || !slices.Equal(got.LinkedDocs, d.LinkedDocs) {
		t.Fatalf("create: %v %v", got, err)
	}
	raw, err := MarshalPayment(got)
	var back Payment
	if err != nil || json.Unmarshal(raw, &back) != nil || !slices.Equal(back.LinkedDocs, d.LinkedDocs) {
		t.Fatalf("stored form %s: %v", raw, err)
	}
	d.ExternalID, d.LinkedDocs[1].DocExtID = "6d000000-0000-4000-8000-000000000002", "счёт 7"
	_, err = svc.CreateInvoice(context.Background(), p, KindInvoice, d)
	var e *Error
	if !errors.As(err, &e) || e.Kind != KindValidation || !slices.Equal(e.FieldNames, []string{"linkedDocs[1].docExtId"}) {
		t.Fatalf("bad docExtId: %v", err)
	}
}

// A draft past its expirationDate is neither signed nor confirmed by QR
// code; on the day itself it still is.
func TestDraftExpiration(t *testing.T) {
	svc, p := newTestPayments(t)
	now := svcNow
	svc.Config.Now = func() time.Time { return now }
	sole := []DigestSignature{{Base64Encoded: "MIIB", CertificateUUID: SandboxCertSole}}
	for i, tc := range []struct {
		later   int
		refused bool
	}{{0, false}, {1, false}, {2, true}, {-1, false}} {
		now = svcNow
		id := "6e000000-0000-4000-8000-00000000000" + itoa(i)
		d := Payment{ExternalID: id, Amount: "99.90", Date: "2026-11-22", Priority: "5", PayeeAccount: SandboxAccount, ExpirationDate: "2026-11-23"}
		if tc.later < 0 {
			d.ExpirationDate = "" // none: only the date's 10-day validity ends it
			tc.later = 10
		}
		if _, err := svc.CreateInvoice(context.Background(), p, KindInvoice, d); err != nil {
			t.Fatal(err)
		}
		now = svcNow.AddDate(0, 0, tc.later)
		_, qrErr := svc.QRConfirm(context.Background(), p, []string{id})
		_, signErr := svc.Sign(context.Background(), p, id, sole, SandboxAccount)
		for op, err := range map[string]error{"QR": qrErr, "sign": signErr} {
			if tc.refused != (KindOf(err) == KindWorkflow) || !tc.refused && err != nil {
				t.Errorf("case %d %s: %v, refused %v", i, op, err, tc.refused)
			}
		}
	}
}
