package bankapi

import (
	"encoding/json"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"partnerapi/internal/banking"
)

// invoiceDraft is a /from-invoice body of payOrg with overrides (nil
// deletes a member).
func invoiceDraft(id string, over map[string]any) string {
	m := map[string]any{"externalId": id, "amount": json.Number("99.9"), "date": "2026-11-22", "purpose": "Счёт 7",
		"payeeAccount": banking.SandboxAccount, "priority": "5"}
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

// linkedDocs of an invoice draft (reference §4.1) are checked, stored and
// answered as sent, by the create and by GET.
func TestInvoiceLinkedDocs(t *testing.T) {
	e := newPayEnv(t)
	docs := []any{map[string]any{"docExtId": "5ea7e000-0000-4000-8000-0000000000a1", "type": "INVOICE"},
		map[string]any{"docExtId": "5EA7E000-0000-4000-8000-0000000000A2"}}
	for i, tc := range []struct {
		name   string
		path   string
		docs   any
		status int
		field  string // VALIDATION_FAULT's fieldNames must hold it
	}{
		{"two documents", "/from-invoice", docs, 201, ""},
		{"on a draft to any payee", "/from-invoice-any", docs, 201, ""},
		{"none", "/from-invoice", []any{}, 201, ""},
		{"docExtId not a uuid", "/from-invoice", []any{map[string]any{"docExtId": "invoice-7", "type": "INVOICE"}}, 400, "linkedDocs[0].docExtId"},
		{"docExtId missing", "/from-invoice", []any{docs[0], map[string]any{"type": "INVOICE"}}, 400, "linkedDocs[1].docExtId"},
		{"type too long", "/from-invoice", []any{map[string]any{"docExtId": "5ea7e000-0000-4000-8000-0000000000a1", "type": strings.Repeat("т", 101)}}, 400, "linkedDocs[0].type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			over := map[string]any{"linkedDocs": tc.docs}
			if tc.path == "/from-invoice-any" {
				over = merge(over, map[string]any{"isPaidByCredit": false, "payeeBankBic": "044525225", "payeeInn": "7707083893", "payeeName": "ООО Ромашка"})
			}
			id := newUUID(900 + i)
			st, m, raw := e.do("POST", paymentsBase+tc.path, "inv", invoiceDraft(id, over))
			if st != tc.status {
				t.Fatalf("%d %s, want %d", st, raw, tc.status)
			}
			if tc.field != "" {
				if names, _ := m["fieldNames"].([]any); m["cause"] != "VALIDATION_FAULT" || !slices.Contains(names, any(tc.field)) {
					t.Fatalf("%s, want VALIDATION_FAULT naming %s", raw, tc.field)
				}
				return
			}
			want, _ := json.Marshal(tc.docs)
			if len(tc.docs.([]any)) == 0 {
				want = []byte("null") // an empty list is left out, as every empty member
			}
			for _, body := range []map[string]any{m, e.get(id)} {
				got, _ := json.Marshal(body["linkedDocs"])
				if string(got) != string(want) {
					t.Fatalf("linkedDocs %s, want %s", got, want)
				}
			}
		})
	}
}

// get is GET /v1/payments/{id} with PAY_DOC_RU.
func (e *payEnv) get(id string) map[string]any {
	e.t.Helper()
	st, m, raw := e.do("GET", paymentsBase+"/"+id, "pay", "")
	if st != 200 {
		e.t.Fatalf("get %s: %d %s", id, st, raw)
	}
	return m
}

// A draft is signed or confirmed by QR code up to its expirationDate, the
// day included, and refused with WORKFLOW_FAULT from the next day, by the
// service's clock.
func TestInvoiceExpirationDate(t *testing.T) {
	e := newPayEnv(t)
	var days atomic.Int64 // days after payNow the service's clock shows
	e.svc.Config.Now = func() time.Time { return payNow.AddDate(0, 0, int(days.Load())) }
	signBody, _ := json.Marshal(map[string]any{"digestSignatures": sigs(banking.SandboxCertSole), "payerAccount": banking.SandboxAccount})
	for i, tc := range []struct {
		name       string
		expiration any // nil: none
		later      int // days after the create the operation comes
		qr         bool
		status     int
	}{
		{"sign the day before", "2026-11-23", 0, false, 200},
		{"sign on the day", "2026-11-23", 1, false, 200},
		{"sign the day after", "2026-11-23", 2, false, 400},
		{"sign a month after", "2026-11-23", 30, false, 400},
		{"sign without expirationDate on the date's last valid day", nil, 10, false, 200},
		{"sign without expirationDate past the date's 10 days", nil, 11, false, 400},
		{"QR on the day", "2026-11-23", 1, true, 201},
		{"QR the day after", "2026-11-23", 2, true, 400},
		{"QR without expirationDate on the date's last valid day", nil, 10, true, 201},
		{"QR without expirationDate past the date's 10 days", nil, 11, true, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			days.Store(0)
			id := newUUID(950 + i)
			if st, m, raw := e.do("POST", paymentsBase+"/from-invoice", "inv", invoiceDraft(id, map[string]any{"expirationDate": tc.expiration})); st != 201 || m["bankStatus"] != "CREATED" {
				t.Fatalf("create: %d %s", st, raw)
			}
			days.Store(int64(tc.later))
			var st int
			var m map[string]any
			var raw string
			if tc.qr {
				st, m, raw = e.do("POST", paymentsBase+"/qr-confirmation", "pay", `{"externalDocIds":["`+id+`"]}`)
			} else {
				st, m, raw = e.do("POST", paymentsBase+"/"+id+"/sign", "pay", string(signBody))
			}
			if st != tc.status {
				t.Fatalf("%d %s, want %d", st, raw, tc.status)
			}
			// Without an expirationDate only the document's own date's
			// 10-day validity (§5.6) ends its signing.
			field := "(expirationDate)"
			if tc.expiration == nil {
				field = "(date 2026-11-22"
			}
			if st == 400 && (m["cause"] != "WORKFLOW_FAULT" || !strings.Contains(m["message"].(string), field)) {
				t.Fatalf("refusal %s", raw)
			}
			want := "CREATED"
			if !tc.qr && st == 200 {
				want = "IMPLEMENTED"
			}
			if g := e.get(id); g["bankStatus"] != want {
				t.Fatalf("status after: %v, want %s", g["bankStatus"], want)
			}
		})
	}
}

// TestInvoiceVATTypes: a draft from an invoice takes vat.type INCLUDED,
// NO_VAT or MANUAL (reference §4.1, the Node SDK's validator of all three
// paths); ONTOP, a payment order's type, is a 400 VALIDATION_FAULT naming
// vat.type, where before the draft was stored.
func TestInvoiceVATTypes(t *testing.T) {
	e := newPayEnv(t)
	anyPayee := map[string]any{"isPaidByCredit": false, "payeeBankBic": "044525225", "payeeInn": "7707083893", "payeeName": "ООО Ромашка"}
	for i, tc := range []struct {
		path, vatType string
		status        int
	}{
		{"/from-invoice", "INCLUDED", 201},
		{"/from-invoice", "NO_VAT", 201},
		{"/from-invoice", "MANUAL", 201},
		{"/from-invoice", "ONTOP", 400},
		{"/from-invoice-any", "ONTOP", 400},
		{"/from-invoice-any", "INCLUDED", 201},
	} {
		t.Run(tc.path+" "+tc.vatType, func(t *testing.T) {
			over := map[string]any{"vat": map[string]any{"type": tc.vatType, "rate": "22", "amount": json.Number("18.01")}}
			if tc.path == "/from-invoice-any" {
				over = merge(over, anyPayee)
			}
			st, m, raw := e.do("POST", paymentsBase+tc.path, "inv", invoiceDraft(newUUID(960+i), over))
			if st != tc.status {
				t.Fatalf("%d %s, want %d", st, raw, tc.status)
			}
			if st == 400 && (m["cause"] != "VALIDATION_FAULT" || !slices.Contains(m["fieldNames"].([]any), any("vat.type"))) {
				t.Fatalf("%s, want VALIDATION_FAULT naming vat.type", raw)
			}
		})
	}
	// A payment order still takes ONTOP.
	if st, _, raw := e.do("POST", paymentsBase, "pay", payDoc(newUUID(970), map[string]any{"vat": map[string]any{"type": "ONTOP", "rate": "22", "amount": json.Number("330.11")}})); st != 201 {
		t.Fatalf("payment order with ONTOP: %d %s", st, raw)
	}
}
