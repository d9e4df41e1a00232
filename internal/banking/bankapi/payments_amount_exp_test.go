package bankapi

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestPaymentsAmountExponent: POST /v1/payments takes an amount in JSON's
// exponent form (Jackson writes a BigDecimal as 1.5E+3) exactly when its
// value is whole kopecks within the amount rules, answers it with two
// decimals and signs it as such; an exponent form below the kopeck is the
// usual VALIDATION_FAULT on amount, saying it must be exact in kopecks.
func TestPaymentsAmountExponent(t *testing.T) {
	e := newPayEnv(t)
	for i, tc := range []struct {
		amount string
		want   string // the amount answered, two decimals; "": refused
		why    string // in the refusal's message
	}{
		{"1.5E+3", "1500.00", ""},
		{"1.5e3", "1500.00", ""},
		{"15005e-1", "1500.50", ""},
		{"1.50500e3", "1505.00", ""},
		{"1234567890123456.7E0", "1234567890123456.70", ""}, // a float64 would make it ...456.75
		{"1e16", "10000000000000000.00", ""},                // 17 characters plainly, as the limit allows
		{"0.29e0", "0.29", ""},
		{"1E-2", "0.01", ""},
		{"1e-3", "", "точной в копейках"},
		{"1.005E0", "", "точной в копейках"},
		{"15.00501e2", "", "точной в копейках"},
		{"1234567890123456.78E0", "", "не длиннее 18"}, // 19 characters plainly
		{"0e5", "", "больше 0"},
		{"1e17", "", "не длиннее 18"},  // 18 digits, but more kopecks than the bank counts
		{"1e400", "", "не длиннее 18"}, // a float64 would make it +Inf
		{"-1.5e3", "", "больше 0"},
	} {
		t.Run(tc.amount, func(t *testing.T) {
			id := newUUID(500 + i)
			st, m, raw := e.do("POST", paymentsBase, "pay", payDoc(id, map[string]any{"amount": json.Number(tc.amount)}))
			if tc.want == "" {
				names, _ := m["fieldNames"].([]any)
				if st != 400 || m["cause"] != "VALIDATION_FAULT" || !slices.Contains(names, any("amount")) || !strings.Contains(raw, tc.why) {
					t.Fatalf("got %d %s, want 400 VALIDATION_FAULT on amount saying %q", st, raw, tc.why)
				}
				return
			}
			if st != 201 || !strings.Contains(raw, `"amount":`+tc.want+`,`) {
				t.Fatalf("got %d %s, want 201 with amount %s", st, raw, tc.want)
			}
			st, _, dig := e.do("GET", paymentsBase+"/"+id+"/digest", "pay", "")
			if st != 200 || !strings.HasPrefix(dig, "amount="+tc.want+"\n") {
				t.Fatalf("digest %d %q", st, dig)
			}
		})
	}
}
