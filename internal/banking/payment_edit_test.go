package banking

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// EditPayment replaces an editable document's content, as the SQL stores
// do under their conditional update.
func (m *memPayments) EditPayment(_ context.Context, orgID, externalID, from string, edit PaymentEdit) (*StoredPayment, error) {
	var d Payment
	if err := json.Unmarshal(edit.Doc, &d); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	key := orgID + "/" + externalID
	sp, ok := m.docs[key]
	if !ok {
		return nil, Errorf(KindDataNotFound, "not found")
	}
	if sp.Status != from {
		return nil, NotEditable(externalID, sp.Status)
	}
	sp.Doc, sp.Kopecks, sp.Status, sp.Comment, sp.Roles, sp.UpdatedAt = d, edit.Kopecks, edit.Status, edit.Comment, nil, edit.At
	m.history[key] = append(m.history[key], StatusChange{Status: edit.Status, Comment: edit.Comment, At: edit.At})
	c := *sp
	return &c, nil
}

// A bank user's edit of a document in CHECKERROR (reference §6, CHECKERROR
// ─edit─> CREATED) is judged as its create would be: each case creates a
// payment order that fails a logical control (operationCode 02 outside a
// budget payment), some with a signature, then edits it. A correction that
// passes is CREATED without a comment, one that still fails stays CHECKERROR
// with the new comment; a refused edit leaves the document, its history and
// its digest as they were.
func TestEditDraft(t *testing.T) {
	ctx := context.Background()
	sole := []DigestSignature{{Base64Encoded: "MIIB", CertificateUUID: SandboxCertSole}}
	for i, tc := range []struct {
		name    string
		reject  bool // ChecksumFailures: ChecksReject
		edit    func(d *Payment)
		status  string // "" refused
		comment string // the new bankComment names it; refused: the error's kind below
		kind    Kind
	}{
		{"corrected", false, func(d *Payment) { d.Amount = "2000.00" }, StatusCreated, "", 0},
		{"corrected without a number keeps the bank's", false, func(d *Payment) { d.Number = "" }, StatusCreated, "", 0},
		{"still dated too far ahead", false, func(d *Payment) { d.Date = "2026-12-02" }, StatusCheckError, "Ошибка в поле date", 0},
		{"a malformed departmentalInfo", false, func(d *Payment) { d.DepartmentalInfo = &DepartmentalInfo{DrawerStatus101: "x"} },
			StatusCheckError, "departmentalInfo", 0},
		{"still failing a logical control", false, func(d *Payment) { d.OperationCode = "02"; d.Purpose = "Другое назначение" },
			StatusCheckError, "operationCode", 0},
		{"the externalId in another case", false, func(d *Payment) { d.ExternalID = strings.ToUpper(d.ExternalID) }, StatusCreated, "", 0},
		{"a failed control refused", true, func(d *Payment) { d.OperationCode = "02" }, "", "", KindValidation},
		{"a format failure", false, func(d *Payment) { d.Amount = "12.345" }, "", "", KindValidation},
		{"another organisation's payer account", false, func(d *Payment) { d.PayerAccount = SandboxAccount2 }, "", "", KindWorkflow},
		{"another externalId", false, func(d *Payment) { d.ExternalID = "6c000000-0000-4000-8000-0000000000ff" }, "", "", KindValidation},
		{"with signatures", false, func(d *Payment) { d.DigestSignatures = sole }, "", "", KindValidation},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc, p := newTestPayments(t)
			id := "6c000000-0000-4000-8000-0000000000" + itoa(10+i)
			d := payOrder(id, "2026-11-22")
			d.OperationCode = "02"
			d.DigestSignatures = sole
			created, err := svc.Create(ctx, p, d)
			if err != nil || created.BankStatus != StatusCheckError || created.Number == "" {
				t.Fatalf("create: %+v %v", created, err)
			}
			digest, _ := svc.Digest(ctx, p, id, "")
			if tc.reject {
				svc.Config.ChecksumFailures = ChecksReject
			}
			fix := payOrder(id, "2026-11-22")
			fix.Number = created.Number
			tc.edit(&fix)
			sp, err := svc.EditDraft(ctx, p.OrgID, id, fix, svcNow)
			h, _ := svc.Store.PaymentHistory(ctx, p.OrgID, id)
			after, _ := svc.Digest(ctx, p, id, "")
			if tc.status == "" {
				if KindOf(err) != tc.kind {
					t.Fatalf("got %+v %v, want kind %v", sp, err, tc.kind)
				}
				if got, _ := svc.Get(ctx, p, id); got.BankStatus != StatusCheckError || len(h) != 1 || after != digest {
					t.Fatalf("a refused edit changed the document: %+v, history %+v", got, h)
				}
				return
			}
			if err != nil || sp.Status != tc.status || !strings.Contains(sp.Comment, tc.comment) || (tc.comment == "") != (sp.Comment == "") {
				t.Fatalf("edit: %+v %v, want %s with a comment naming %q", sp, err, tc.status, tc.comment)
			}
			if sp.Doc.ExternalID != id || sp.Doc.Number != created.Number || sp.Kind != KindPayDoc || sp.Roles != nil {
				t.Fatalf("edited %+v: want the same externalId text, number and kind, and no signature roles", sp)
			}
			if len(h) != 2 || h[1] != (StatusChange{Status: tc.status, Comment: sp.Comment, At: svcNow}) {
				t.Fatalf("history %+v", h)
			}
			if want := svc.Config.Digest.Payment(&sp.Doc); after != want || after == digest && tc.name == "corrected" {
				t.Fatalf("digest after the edit %q, want that of the new content %q (before %q)", after, want, digest)
			}
		})
	}
}

// An edited document that passes is signed like any draft, its roles
// starting empty whatever the create's signatures were; only CHECKERROR is
// editable, so CREATED (which a signer may be signing) and a final status
// are refused in NotEditable's words, and another organisation's document
// is not found.
func TestEditDraftStatuses(t *testing.T) {
	ctx := context.Background()
	svc, p := newTestPayments(t)
	sole := []DigestSignature{{Base64Encoded: "MIIB", CertificateUUID: SandboxCertSole}}
	id, draft := "6d000000-0000-4000-8000-000000000001", "6d000000-0000-4000-8000-000000000002"
	bad := payOrder(id, "2026-11-22")
	bad.OperationCode, bad.DigestSignatures = "02", sole
	if _, err := svc.Create(ctx, p, bad); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Create(ctx, p, payOrder(draft, "2026-11-22")); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.EditDraft(ctx, "org-2", id, payOrder(id, "2026-11-22"), svcNow); KindOf(err) != KindDataNotFound {
		t.Fatalf("another organisation's document: %v, want not found", err)
	}
	if _, err := svc.Sign(ctx, p, id, sole, ""); KindOf(err) != KindWorkflow {
		t.Fatalf("sign a CHECKERROR document: %v, want a workflow error", err)
	}
	if sp, err := svc.EditDraft(ctx, p.OrgID, id, payOrder(id, "2026-11-22"), svcNow); err != nil || sp.Status != StatusCreated {
		t.Fatalf("edit: %+v %v", sp, err)
	}
	if got, err := svc.Sign(ctx, p, id, sole, ""); err != nil || got.BankStatus != StatusImplemented {
		t.Fatalf("sign the edited document: %+v %v", got, err)
	}
	for doc, status := range map[string]string{id: StatusImplemented, draft: StatusCreated} {
		_, err := svc.EditDraft(ctx, p.OrgID, doc, payOrder(doc, "2026-11-22"), svcNow)
		if err == nil || err.Error() != NotEditable(doc, status).Error() {
			t.Fatalf("edit %s in %s: %v, want %v", doc, status, err, NotEditable(doc, status))
		}
	}
}

// A draft from an invoice is edited as its kind is created: its kind stays,
// a -any draft with a wrong payee account key is CHECKERROR until the key is
// right, and the paymentNumber the bank gave it stays when the correction
// names none.
func TestEditInvoiceDraft(t *testing.T) {
	ctx := context.Background()
	svc, p := newTestPayments(t)
	no := false
	const id = "6e000000-0000-4000-8000-000000000001"
	d := Payment{ExternalID: id, Amount: "99.90", Date: "2026-11-22", Purpose: "Счёт 7", Priority: "5", IsPaidByCredit: &no,
		PayeeName: "АО Лютик", PayeeINN: "7830002293", PayeeAccount: "40702810700000000777", PayeeBankBIC: "044525593",
		PayeeBankCorrAccount: "30101810200000000593"}
	created, err := svc.CreateInvoice(ctx, p, KindInvoiceAny, d)
	if err != nil || created.BankStatus != StatusCheckError || created.PaymentNumber == "" {
		t.Fatalf("create: %+v %v", created, err)
	}
	if sp, err := svc.EditDraft(ctx, p.OrgID, id, d, svcNow); err != nil || sp.Status != StatusCheckError || !strings.Contains(sp.Comment, "payeeAccount") {
		t.Fatalf("edit with the same key: %+v %v", sp, err)
	}
	d.PayeeAccount = "40702810600000000777"
	sp, err := svc.EditDraft(ctx, p.OrgID, id, d, svcNow)
	if err != nil || sp.Status != StatusCreated || sp.Comment != "" || sp.Kind != KindInvoiceAny || sp.Doc.PaymentNumber != created.PaymentNumber {
		t.Fatalf("edit with the key right: %+v %v", sp, err)
	}
	if KindScope(sp.Kind) != ScopePayDocRUInvoiceAny || KindScope(KindPayDoc) != ScopePayDocRU {
		t.Fatalf("scopes of the kinds: %s %s", KindScope(sp.Kind), KindScope(KindPayDoc))
	}
}
