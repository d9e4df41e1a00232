package bankapi

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestPaymentsAmountTrailingZeros: an amount written with zeros past the
// second decimal (15.000, 1.50000: a Java BigDecimal of scale 3 or more
// serialises so, and both official SDKs take it) is exact in kopecks, so
// POST /v1/payments, /from-invoice and vat.amount take it and keep it
// with two decimals in the answer, in GET and in the digest (reference §8:
// the amount line has two decimals, so 15, 15.00 and 15.000 sign the same
// text). A non-zero digit past the second decimal is still refused, and the
// 18-character rule measures the value, not the zeros padding it. Before,
// every such amount was a 400 VALIDATION_FAULT.
func TestPaymentsAmountTrailingZeros(t *testing.T) {
	e := newPayEnv(t)
	for i, tc := range []struct {
		name, path, field string // field: "amount" or "vat.amount"
		amount            string
		want              string // answered and signed; "": refused
		why               string // in the refusal's message
	}{
		{"scale 3", "", "amount", "15.000", "15.00", ""},
		{"scale 5", "", "amount", "1.50000", "1.50", ""},
		{"kopecks then zeros", "", "amount", "1500.5000", "1500.50", ""},
		{"many zeros", "", "amount", "7.01" + strings.Repeat("0", 40), "7.01", ""},
		{"two decimals as before", "", "amount", "15.00", "15.00", ""},
		{"whole as before", "", "amount", "15", "15.00", ""},
		{"zeros and an exponent", "", "amount", "1.5000e1", "15.00", ""},
		{"15 characters of value", "", "amount", "123456789012345.780", "123456789012345.78", ""},
		{"a third decimal", "", "amount", "15.001", "", "не более 2 знаков"},
		{"a digit after zeros", "", "amount", "15.0001", "", "не более 2 знаков"},
		{"a trailing digit", "", "amount", "15.0000000009", "", "не более 2 знаков"},
		{"zero", "", "amount", "0.000", "", "больше 0"},
		{"negative", "", "amount", "-15.000", "", "больше 0"},
		{"19 characters of value", "", "amount", "1234567890123456.780", "", "не длиннее 18"},
		{"past an int64", "", "amount", "99999999999999999.000", "", "не длиннее 18"},
		{"invoice draft", "/from-invoice", "amount", "99.900", "99.90", ""},
		{"invoice draft, a third decimal", "/from-invoice", "amount", "99.901", "", "не более 2 знаков"},
		{"vat amount", "", "vat.amount", "270.5800", "270.58", ""},
		{"vat amount, a third decimal", "", "vat.amount", "270.581", "", "не более 2 знаков"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := newUUID(2600 + i)
			over := map[string]any{"amount": json.Number(tc.amount)}
			if tc.field == "vat.amount" {
				over = map[string]any{"vat": map[string]any{"type": "INCLUDED", "rate": "22", "amount": json.Number(tc.amount)}}
			}
			body, token := payDoc(id, over), "pay"
			if tc.path != "" {
				body, token = invoiceDraft(id, over), "inv"
			}
			st, m, raw := e.do("POST", paymentsBase+tc.path, token, body)
			if tc.want == "" {
				names, _ := m["fieldNames"].([]any)
				if st != 400 || m["cause"] != "VALIDATION_FAULT" || !slices.Contains(names, any(tc.field)) || !strings.Contains(raw, tc.why) {
					t.Fatalf("got %d %s, want 400 VALIDATION_FAULT on %s saying %q", st, raw, tc.field, tc.why)
				}
				return
			}
			if st != 201 || !strings.Contains(raw, `"amount":`+tc.want+`,`) && !strings.Contains(raw, `"amount":`+tc.want+`}`) {
				t.Fatalf("got %d %s, want 201 with %s %s", st, raw, tc.field, tc.want)
			}
			if st, _, got := e.do("GET", paymentsBase+"/"+id, "pay", ""); st != 200 || !strings.Contains(got, `"amount":`+tc.want) {
				t.Fatalf("GET %d %s, want %s %s", st, got, tc.field, tc.want)
			}
			if tc.field != "amount" {
				return
			}
			st, _, dig := e.do("GET", paymentsBase+"/"+id+"/digest", "pay", "")
			if st != 200 || !strings.HasPrefix(dig, "amount="+tc.want+"\n") {
				t.Fatalf("digest %d %q, want amount=%s", st, dig, tc.want)
			}
		})
	}
}
