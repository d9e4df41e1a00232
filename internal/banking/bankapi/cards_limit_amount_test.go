package bankapi

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"partnerapi/internal/banking"
)

// TestCardLimitAmountForms posts card-limit applications whose limit is
// written as Java and Kotlin clients serialise a BigDecimal: the exponent
// form of JSON is taken when exact in kopecks, as a payment's amount is
// (banking.Amount.Kopecks), and answered and signed with two decimals; one
// below the kopeck is VALIDATION_FAULT saying so, and the limit keeps its
// number(38,2) range in either form. Zeros past the second decimal are
// taken as they are for a payment's amount.
func TestCardLimitAmountForms(t *testing.T) {
	e := newCardEnv(t, 10)
	const path = "/fintech/api/v1/business-cards/limits"
	for i, tc := range []struct {
		limit string
		want  string // the answered and signed limit; "" when refused
		check string // a part of the refusal's check
	}{
		{"1.5E+3", "1500.00", ""},
		{"1.5e3", "1500.00", ""},
		{"1.505e1", "15.05", ""},
		{"1.500e0", "1.50", ""},
		{"25E-2", "0.25", ""},
		{"0e5", "0.00", ""},
		{"1e35", "1" + strings.Repeat("0", 35) + ".00", ""},
		{"1e36", "", "неотрицательное число"},
		{"1e-3", "", "экспоненциальной записи"},
		{"1.005E0", "", "экспоненциальной записи"},
		{"-1.5E+3", "", "неотрицательное число"},
		{"1.005", "", "неотрицательное число"},
		{"12.5", "12.50", ""},
		// Zeros past the second decimal (a BigDecimal of scale 3 or more)
		// change no value: taken and kept with two decimals; any other
		// digit there is still refused, and the range is the value's.
		{"15.000", "15.00", ""},
		{"1.50000", "1.50", ""},
		{"0.000", "0.00", ""},
		{"1" + strings.Repeat("0", 35) + ".990", "1" + strings.Repeat("0", 35) + ".99", ""},
		{"1" + strings.Repeat("0", 36) + ".000", "", "неотрицательное число"},
		{"15.001", "", "неотрицательное число"},
		{"15.0010", "", "неотрицательное число"},
	} {
		t.Run(tc.limit, func(t *testing.T) {
			ext := fmt.Sprintf("00000000-0000-4000-8000-%012d", 100+i)
			code, body := e.do("POST", path, "application/json", limitBody("sbc-00001", ext, tc.limit, sole))
			if tc.want == "" {
				var eb errorBody
				_ = json.Unmarshal([]byte(body), &eb)
				if code != 400 || eb.Cause != "VALIDATION_FAULT" || strings.Join(eb.FieldNames, ",") != "limit" ||
					len(eb.Checks) != 1 || !strings.Contains(eb.Checks[0], tc.check) {
					t.Fatalf("%d %s, want 400 VALIDATION_FAULT on limit saying %q", code, body, tc.check)
				}
				return
			}
			var l banking.LimitChange
			if code != 201 || json.Unmarshal([]byte(body), &l) != nil || string(l.Limit) != tc.want {
				t.Fatalf("%d %s, want 201 with limit %s", code, body, tc.want)
			}
			digest := e.ver.digests[len(e.ver.digests)-1]
			if !strings.HasSuffix(digest, "\nlimit="+tc.want) {
				t.Fatalf("digest %q, want limit=%s", digest, tc.want)
			}
		})
	}
}
