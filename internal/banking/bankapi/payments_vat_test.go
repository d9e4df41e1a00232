package bankapi

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"partnerapi/internal/banking"
)

// TestPaymentsVATTypeRequired: a vat object must say its type (reference
// §4: vat {type, rate, amount}; both official SDKs' validators require
// type whenever vat is sent, payment orders and drafts from invoices
// alike). Before, a vat without type, or with type "", was stored, a
// document whose VAT says neither included, on top, nor none; now it is a
// 400 VALIDATION_FAULT naming vat.type. A null vat, or none, is no VAT
// block at all and still passes.
func TestPaymentsVATTypeRequired(t *testing.T) {
	e := newPayEnv(t)
	for i, tc := range []struct {
		name, path, token string
		vat               any // nil: the member is left out
		status            int
	}{
		{"order: rate and amount without type", "", "pay", map[string]any{"rate": "22", "amount": json.Number("1.80")}, 400},
		{"order: empty type", "", "pay", map[string]any{"type": "", "rate": "22"}, 400},
		{"order: empty object", "", "pay", map[string]any{}, 400},
		{"order: null type", "", "pay", map[string]any{"type": nil, "amount": json.Number("1.80")}, 400},
		{"order: NO_VAT alone", "", "pay", map[string]any{"type": "NO_VAT"}, 201},
		{"order: INCLUDED", "", "pay", map[string]any{"type": "INCLUDED", "rate": "22", "amount": json.Number("1.80")}, 201},
		{"order: no vat", "", "pay", nil, 201},
		{"invoice: without type", "/from-invoice", "inv", map[string]any{"rate": "22", "amount": json.Number("1.80")}, 400},
		{"invoice: MANUAL", "/from-invoice", "inv", map[string]any{"type": "MANUAL", "amount": json.Number("1.80")}, 201},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var over map[string]any
			if tc.vat != nil {
				over = map[string]any{"vat": tc.vat}
			}
			body := payDoc(newUUID(1100+i), over)
			if tc.path != "" {
				body = invoiceDraft(newUUID(1100+i), over)
			}
			st, m, raw := e.do("POST", paymentsBase+tc.path, tc.token, body)
			if st != tc.status {
				t.Fatalf("%d %s, want %d", st, raw, tc.status)
			}
			if st == http.StatusBadRequest {
				names, _ := m["fieldNames"].([]any)
				if m["cause"] != "VALIDATION_FAULT" || !slices.Equal(names, []any{"vat.type"}) {
					t.Fatalf("%s, want VALIDATION_FAULT naming vat.type alone", raw)
				}
			}
		})
	}
	// A null vat is no VAT block.
	if st, _, raw := e.do("POST", paymentsBase, "pay", payDoc(newUUID(1120), map[string]any{"vat": json.RawMessage("null")})); st != http.StatusCreated {
		t.Fatalf("null vat: %d %s", st, raw)
	}
}

// TestPaymentsVATConsistency: the VAT block must be one a tax authority can
// read (reference §5.6: rates 22 % from 2026, 20 % before, 10 % reduced,
// 5 % and 7 % for simplified-tax payers; the reference says nothing of the
// block's consistency, so this is what a bank's logical control makes of
// it). A VAT amount above the payment's own amount, a NO_VAT block that
// names a rate or an amount, and a rate no tax law has are logical-control
// failures: CHECKERROR naming the member by default, 400 VALIDATION_FAULT
// under --banking-checksum-failures reject (§13). Before, each was stored
// as CREATED and could be signed and executed.
func TestPaymentsVATConsistency(t *testing.T) {
	e := newPayEnv(t)
	vat := func(typ, rate, amount string) map[string]any {
		m := map[string]any{"type": typ}
		if rate != "" {
			m["rate"] = rate
		}
		if amount != "" {
			m["amount"] = json.Number(amount)
		}
		return map[string]any{"vat": m}
	}
	for i, tc := range []struct {
		name, path, token string
		over              map[string]any
		bank, field       string // field: the member bankComment names
	}{
		// payDoc's amount is 1500.50.
		{"INCLUDED 22 %", "", "pay", vat("INCLUDED", "22", "270.58"), "CREATED", ""},
		{"ONTOP 20 %", "", "pay", vat("ONTOP", "20", "250.08"), "CREATED", ""},
		{"INCLUDED 10 %", "", "pay", vat("INCLUDED", "10", "136.41"), "CREATED", ""},
		{"INCLUDED 5 % of a simplified-tax payer", "", "pay", vat("INCLUDED", "5", "71.45"), "CREATED", ""},
		{"INCLUDED 7 %", "", "pay", vat("INCLUDED", "7", "98.16"), "CREATED", ""},
		{"INCLUDED 0 %", "", "pay", vat("INCLUDED", "0", "0"), "CREATED", ""},
		{"MANUAL the whole amount", "", "pay", vat("MANUAL", "", "1500.50"), "CREATED", ""},
		{"NO_VAT alone", "", "pay", vat("NO_VAT", "", ""), "CREATED", ""},
		{"NO_VAT with 0 and 0", "", "pay", vat("NO_VAT", "0", "0.00"), "CREATED", ""},
		{"MANUAL above the amount", "", "pay", vat("MANUAL", "", "1500.51"), "CHECKERROR", "vat.amount"},
		{"INCLUDED above the amount", "", "pay", vat("INCLUDED", "22", "99999"), "CHECKERROR", "vat.amount"},
		{"NO_VAT with an amount", "", "pay", vat("NO_VAT", "", "10"), "CHECKERROR", "vat.amount"},
		{"NO_VAT with a rate", "", "pay", vat("NO_VAT", "22", ""), "CHECKERROR", "vat.rate"},
		{"rate 99 %", "", "pay", vat("INCLUDED", "99", "10"), "CHECKERROR", "vat.rate"},
		{"rate 21 %", "", "pay", vat("INCLUDED", "21", "10"), "CHECKERROR", "vat.rate"},
		{"invoice: MANUAL above the amount", "/from-invoice", "inv", vat("MANUAL", "", "100"), "CHECKERROR", "vat.amount"},
		{"invoice: INCLUDED 22 %", "/from-invoice", "inv", vat("INCLUDED", "22", "18.01"), "CREATED", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := payDoc(newUUID(1200+i), tc.over)
			if tc.path != "" {
				body = invoiceDraft(newUUID(1200+i), tc.over) // amount 99.9
			}
			st, m, raw := e.do("POST", paymentsBase+tc.path, tc.token, body)
			if st != http.StatusCreated || m["bankStatus"] != tc.bank {
				t.Fatalf("%d %s, want 201 %s", st, raw, tc.bank)
			}
			comment, _ := m["bankComment"].(string)
			if tc.field != "" && !strings.Contains(comment, "Ошибка в поле "+tc.field+":") || tc.field == "" && comment != "" {
				t.Fatalf("bankComment %q, want one naming %q", comment, tc.field)
			}
		})
	}
	// Under --banking-checksum-failures reject the same failure is a 400.
	e.svc.Config.ChecksumFailures = banking.ChecksReject
	st, m, raw := e.do("POST", paymentsBase, "pay", payDoc(newUUID(1250), vat("MANUAL", "", "2000")))
	if names, _ := m["fieldNames"].([]any); st != http.StatusBadRequest || m["cause"] != "VALIDATION_FAULT" || !slices.Equal(names, []any{"vat.amount"}) {
		t.Fatalf("reject: %d %s, want 400 VALIDATION_FAULT naming vat.amount", st, raw)
	}
}
