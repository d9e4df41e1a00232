package bankapi

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"partnerapi/internal/banking"
)

// sandboxEdit is the path of the sandbox edit of document id.
func sandboxEdit(id string) string { return sandboxPayments + "/" + id + "/edit" }

// failsControl makes payDoc fail a logical control: 02 outside a budget
// payment is stored in CHECKERROR.
var failsControl = map[string]any{"operationCode": "02"}

// A bank user's edit over HTTP (reference §6, CHECKERROR ─edit─> CREATED):
// a correction that still fails stays CHECKERROR with the new comment, one
// that passes becomes CREATED with bankComment null and the new content's
// digest, which is what the sandbox certificates then sign to IMPLEMENTED.
// Each answer is the document as GET answers it, and each move is recorded
// at the service's clock.
func TestSandboxEditToSigned(t *testing.T) {
	e := newPayEnv(t)
	id := newUUID(7501)
	e.createIn(id, banking.StatusCheckError, failsControl)
	_, _, before := e.do("GET", paymentsBase+"/"+id+"/digest", "pay", "")

	// Dated ten days ahead: the sandbox's future-date CHECKERROR instead.
	st, m, raw := e.do("POST", sandboxEdit(id), "pay", payDoc(id, map[string]any{"date": "2026-12-02"}))
	if st != 200 || m["bankStatus"] != banking.StatusCheckError || !strings.HasPrefix(m["bankComment"].(string), "Ошибка в поле date") || m["date"] != "2026-12-02" {
		t.Fatalf("edit still failing: %d %s", st, raw)
	}
	if _, _, get := e.do("GET", paymentsBase+"/"+id, "pay", ""); get != raw {
		t.Fatalf("the edit answered %s, GET %s", raw, get)
	}
	if st, m, _ := e.do("POST", paymentsBase+"/"+id+"/sign", "pay", `{"digestSignatures":[{"base64Encoded":"MIIB","certificateUuid":"`+banking.SandboxCertSole+`"}]}`); st != 400 || m["cause"] != "WORKFLOW_FAULT" {
		t.Fatalf("sign in CHECKERROR: %d %v", st, m)
	}

	// Without externalId, which the path gives, and another amount.
	st, m, raw = e.do("POST", sandboxEdit(id), "pay", payDoc(id, map[string]any{"externalId": nil, "amount": json.Number("1700")}))
	if st != 200 || m["bankStatus"] != banking.StatusCreated || m["bankComment"] != nil || m["externalId"] != id || m["amount"] != 1700.0 {
		t.Fatalf("edit corrected: %d %s", st, raw)
	}
	if _, _, get := e.do("GET", paymentsBase+"/"+id, "pay", ""); get != raw {
		t.Fatalf("the edit answered %s, GET %s", raw, get)
	}
	_, _, digest := e.do("GET", paymentsBase+"/"+id+"/digest", "pay", "")
	if digest == before || !strings.Contains(digest, "1700.00") {
		t.Fatalf("digest after the edit %q, before %q: want the new content's", digest, before)
	}
	h, err := e.svc.History(context.Background(), banking.Principal{OrgID: payOrg}, id)
	if err != nil || len(h) != 3 || h[1].Status != banking.StatusCheckError || h[2] != (banking.StatusChange{Status: banking.StatusCreated, At: payNow}) {
		t.Fatalf("history %+v %v", h, err)
	}

	e.ver.digests = nil
	st, m, raw = e.do("POST", paymentsBase+"/"+id+"/sign", "pay", `{"digestSignatures":[{"base64Encoded":"MIIB","certificateUuid":"`+banking.SandboxCertSole+`"}]}`)
	if st != 200 || m["bankStatus"] != banking.StatusImplemented {
		t.Fatalf("sign the edited document: %d %s", st, raw)
	}
	if len(e.ver.digests) != 1 || e.ver.digests[0] != digest {
		t.Fatalf("signatures checked over %q, want the edited digest %q", e.ver.digests, digest)
	}
}

// Everything an edit refuses leaves the document as it was: a document not
// in CHECKERROR (a draft, which a signer may be signing, and a signed one)
// in NotEditable's words, another organisation's document as its GET is
// refused, a token without the document kind's scope 403, a body that is
// not JSON 400 DESERIALIZATION_FAULT, a format failure, signatures or
// another externalId 400 VALIDATION_FAULT, and a payer account that is not
// the organisation's 400 WORKFLOW_FAULT.
func TestSandboxEditRefusals(t *testing.T) {
	e := newPayEnv(t)
	checked, draft, signed := newUUID(7601), newUUID(7602), newUUID(7603)
	e.createIn(checked, banking.StatusCheckError, failsControl)
	e.createIn(draft, banking.StatusCreated, nil)
	e.createIn(signed, banking.StatusImplemented, map[string]any{"digestSignatures": sigs(banking.SandboxCertSole)})
	_, _, getOther := e.do("GET", paymentsBase+"/"+checked, "pay2", "")
	_, _, kept := e.do("GET", paymentsBase+"/"+checked, "pay", "")
	notEditable := func(id, status string) string { return banking.NotEditable(id, status).(*banking.Error).Message }
	for _, c := range []struct {
		name, id, token, ctype, body string
		status                       int
		cause, says                  string
	}{
		{"a draft", draft, "pay", "application/json", payDoc(draft, nil), 400, "WORKFLOW_FAULT", notEditable(draft, banking.StatusCreated)},
		{"a signed document", signed, "pay", "application/json", payDoc(signed, nil), 400, "WORKFLOW_FAULT", notEditable(signed, banking.StatusImplemented)},
		{"another organisation's", checked, "pay2", "application/json", payDoc(checked, nil), 404, "DATA_NOT_FOUND_EXCEPTION", ""},
		{"unknown", newUUID(7699), "pay", "application/json", payDoc(newUUID(7699), nil), 404, "DATA_NOT_FOUND_EXCEPTION", ""},
		{"an invoice scope on a payment order", checked, "inv-only", "application/json", payDoc(checked, nil), 403, "ACTION_ACCESS_EXCEPTION", "PAY_DOC_RU"},
		{"card scope", checked, "cards", "application/json", payDoc(checked, nil), 403, "ACTION_ACCESS_EXCEPTION", "PAY_DOC_RU"},
		{"no token", checked, "", "application/json", payDoc(checked, nil), 401, "UNAUTHORIZED", ""},
		{"malformed JSON", checked, "pay", "application/json", `{"externalId":`, 400, "DESERIALIZATION_FAULT", ""},
		{"amount a string", checked, "pay", "application/json", payDoc(checked, map[string]any{"amount": "ten"}), 400, "DESERIALIZATION_FAULT", "amount"},
		{"a body of another type", checked, "pay", "text/plain", payDoc(checked, nil), 400, "DESERIALIZATION_FAULT", ""},
		{"a short payer account", checked, "pay", "application/json", payDoc(checked, map[string]any{"payerAccount": "4070281053883341173"}), 400, "VALIDATION_FAULT", "payerAccount"},
		{"signatures", checked, "pay", "application/json", payDoc(checked, map[string]any{"digestSignatures": sigs(banking.SandboxCertSole)}), 400, "VALIDATION_FAULT", "digestSignatures"},
		{"another externalId", checked, "pay", "application/json", payDoc(draft, nil), 400, "VALIDATION_FAULT", "externalId"},
		{"another organisation's payer account", checked, "pay", "application/json", payDoc(checked, map[string]any{"payerAccount": otherOrgAcc}), 400, "WORKFLOW_FAULT", otherOrgAcc},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, m, raw := e.doTyped("POST", sandboxEdit(c.id), c.token, c.ctype, c.body)
			if st != c.status || m["cause"] != c.cause || !strings.Contains(raw, c.says) {
				t.Fatalf("%d %s, want %d %s saying %q", st, raw, c.status, c.cause, c.says)
			}
		})
	}
	// Another organisation's document is refused in GET's very words.
	_, _, editOther := e.do("POST", sandboxEdit(checked), "pay2", payDoc(checked, nil))
	var a, b map[string]any
	_ = json.Unmarshal([]byte(getOther), &a)
	_ = json.Unmarshal([]byte(editOther), &b)
	if a["cause"] != b["cause"] || a["message"] != b["message"] {
		t.Fatalf("another organisation's edit %s, its GET %s", editOther, getOther)
	}
	if _, _, now := e.do("GET", paymentsBase+"/"+checked, "pay", ""); now != kept {
		t.Fatalf("refused edits changed the document: %s, was %s", now, kept)
	}
	for id, want := range map[string]string{draft: banking.StatusCreated, signed: banking.StatusImplemented} {
		if _, m, raw := e.do("GET", paymentsBase+"/"+id+"/state", "pay", ""); m["bankStatus"] != want {
			t.Fatalf("a refused edit changed %s: %s", id, raw)
		}
	}
	if h, _ := e.svc.History(context.Background(), banking.Principal{OrgID: payOrg}, checked); len(h) != 1 {
		t.Fatalf("refused edits wrote history: %+v", h)
	}
}

// A draft from an invoice is edited under the scope it was created with,
// as a document of its kind: a far-future draft made right becomes CREATED
// and keeps its signing link, while PAY_DOC_RU alone is refused.
func TestSandboxEditInvoiceDraft(t *testing.T) {
	e := newPayEnv(t)
	id := newUUID(7701)
	if st, m, raw := e.do("POST", paymentsBase+"/from-invoice", "inv-only", invoiceDraft(id, map[string]any{"date": "2026-12-02"})); st != 201 || m["bankStatus"] != banking.StatusCheckError {
		t.Fatalf("create: %d %s", st, raw)
	}
	if st, m, raw := e.do("POST", sandboxEdit(id), "pay", invoiceDraft(id, nil)); st != 403 || m["cause"] != "ACTION_ACCESS_EXCEPTION" || !strings.Contains(raw, banking.ScopePayDocRUInvoice) {
		t.Fatalf("PAY_DOC_RU on an invoice draft: %d %s", st, raw)
	}
	st, m, raw := e.do("POST", sandboxEdit(id), "inv-only", invoiceDraft(id, nil))
	if st != 200 || m["bankStatus"] != banking.StatusCreated || m["bankComment"] != nil || !strings.Contains(m["signingUrl"].(string), id) {
		t.Fatalf("edit: %d %s", st, raw)
	}
	if _, _, get := e.do("GET", paymentsBase+"/"+id, "pay", ""); get != raw {
		t.Fatalf("the edit answered %s, GET %s", raw, get)
	}
}

// Outside the sandbox only the bank's users edit documents: the route is
// 403 in the test and production contours, even for a malformed body, and
// the document stays in CHECKERROR.
func TestSandboxEditOnlyInTheSandbox(t *testing.T) {
	for _, contour := range []string{banking.ContourTest, banking.ContourProduction} {
		t.Run(contour, func(t *testing.T) {
			e := newPayEnv(t)
			id := newUUID(7801)
			e.createIn(id, banking.StatusCheckError, failsControl)
			e.svc.Config.Contour = contour
			for _, body := range []string{payDoc(id, nil), `{"externalId":`} {
				st, m, raw := e.do("POST", sandboxEdit(id), "pay", body)
				if st != 403 || m["cause"] != "ACTION_ACCESS_EXCEPTION" || m["referenceId"] == nil || !strings.Contains(raw, contour) {
					t.Fatalf("body %.40s: %d %s, want 403 ACTION_ACCESS_EXCEPTION naming the contour", body, st, raw)
				}
			}
			if _, m, raw := e.do("GET", paymentsBase+"/"+id+"/state", "pay", ""); m["bankStatus"] != banking.StatusCheckError {
				t.Fatalf("a refused edit changed the document: %s", raw)
			}
		})
	}
}

// An edit queues no webhook, CHECKERROR and CREATED being no final status:
// the partner's URL gets exactly one delivery, the IMPLEMENTED of the
// edited document once it is signed.
func TestSandboxEditWebhook(t *testing.T) {
	e := newPayEnv(t)
	partner := newWebhookPartner(t, e)
	id := newUUID(7901)
	e.createIn(id, banking.StatusCheckError, failsControl)
	for _, body := range []string{payDoc(id, map[string]any{"date": "2026-12-02"}), payDoc(id, nil)} {
		if st, _, raw := e.do("POST", sandboxEdit(id), "pay", body); st != 200 {
			t.Fatalf("edit: %d %s", st, raw)
		}
	}
	if got := partner.drain(); len(got) != 0 {
		t.Fatalf("the edits sent %v, want nothing", got)
	}
	if st, _, raw := e.do("POST", paymentsBase+"/"+id+"/sign", "pay", `{"digestSignatures":[{"base64Encoded":"MIIB","certificateUuid":"`+banking.SandboxCertSole+`"}]}`); st != 200 {
		t.Fatalf("sign: %d %s", st, raw)
	}
	if got := partner.drain(); len(got) != 1 || got[0]["externalId"] != id || got[0]["bankStatus"] != banking.StatusImplemented {
		t.Fatalf("partner got %v, want one IMPLEMENTED delivery of %s", got, id)
	}
}
