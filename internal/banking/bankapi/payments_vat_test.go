package bankapi

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"
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
