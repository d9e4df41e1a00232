package bankapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestPaymentsDepartmentalCalendarDates: a date in field 107 (tax period
// DD.MM.YYYY) or field 109 (document date) must be a day of the calendar
// (reference §5.8). Before, both were matched by shape alone, so
// docDate109 "99.99.9999" or "31.02.2026" and taxPeriod107 "29.02.2026"
// made a CREATED draft; now such a departmentalInfo is malformed, which the
// sandbox stores in CHECKERROR naming the member (reference §4), for a
// payment order and for a draft from a budget invoice alike.
func TestPaymentsDepartmentalCalendarDates(t *testing.T) {
	e := newPayEnv(t)
	// An ordinary payee: CheckDepartmentalInfo judges the block's shape
	// whatever the payee, and no budget rule interferes.
	order := func(n int, di map[string]any) string {
		return payDoc(newUUID(n), map[string]any{"departmentalInfo": di})
	}
	// A customs payment's draft from a budget invoice: 107 is the customs
	// office's code there, and 109 the date of the customs document that
	// 108 numbers (reason ПК).
	budget := func(n int, di map[string]any) string {
		block := map[string]any{"drawerStatus101": "06", "kbk": "15310102010011000110", "oktmo": "45328000", "reasonCode106": "ПК",
			"taxPeriod107": "10702000", "docNumber108": "1234567", "docDate109": "01.11.2026", "uip": "0"}
		for k, v := range di {
			block[k] = v
		}
		b, _ := json.Marshal(map[string]any{"externalId": newUUID(n), "amount": json.Number("99.9"), "date": "2026-11-22",
			"purpose": "Таможенный платёж", "priority": "5", "payeeName": "МОУ ФТС России", "payeeInn": "7730176610",
			"payeeKpp": "773001001", "payeeAccount": "03100643000000019502", "payeeBankBic": "024501901",
			"payeeBankCorrAccount": "40102810045370000002", "departmentalInfo": block})
		return string(b)
	}
	for _, tc := range []struct {
		name, path, token, body string
		bank, field             string // field: the member bankComment names
	}{
		{"109 a real date", "", "pay", order(1000, map[string]any{"docDate109": "15.11.2026"}), "CREATED", ""},
		{"109 day 31 of February", "", "pay", order(1001, map[string]any{"docDate109": "31.02.2026"}), "CHECKERROR", "departmentalInfo.docDate109"},
		{"109 month 13", "", "pay", order(1002, map[string]any{"docDate109": "01.13.2026"}), "CHECKERROR", "departmentalInfo.docDate109"},
		{"109 all nines", "", "pay", order(1003, map[string]any{"docDate109": "99.99.9999"}), "CHECKERROR", "departmentalInfo.docDate109"},
		{"109 day 00", "", "pay", order(1004, map[string]any{"docDate109": "00.11.2026"}), "CHECKERROR", "departmentalInfo.docDate109"},
		{"109 29 February of a leap year", "", "pay", order(1005, map[string]any{"docDate109": "29.02.2028"}), "CREATED", ""},
		{"109 0 and 00 stay", "", "pay", order(1006, map[string]any{"docDate109": "00"}), "CREATED", ""},
		{"107 a real date", "", "pay", order(1007, map[string]any{"taxPeriod107": "28.02.2026"}), "CREATED", ""},
		{"107 29 February of a common year", "", "pay", order(1008, map[string]any{"taxPeriod107": "29.02.2026"}), "CHECKERROR", "departmentalInfo.taxPeriod107"},
		{"107 day 31 of April", "", "pay", order(1009, map[string]any{"taxPeriod107": "31.04.2026"}), "CHECKERROR", "departmentalInfo.taxPeriod107"},
		{"107 periods are not dates", "", "pay", order(1010, map[string]any{"taxPeriod107": "КВ.04.2026"}), "CREATED", ""},
		{"budget draft: 109 a real date", "/from-invoice-budget", "inv", budget(1011, map[string]any{"docDate109": "15.11.2026"}), "CREATED", ""},
		{"budget draft: 109 day 31 of June", "/from-invoice-budget", "inv", budget(1012, map[string]any{"docDate109": "31.06.2026"}), "CHECKERROR", "departmentalInfo.docDate109"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, m, raw := e.do("POST", paymentsBase+tc.path, tc.token, tc.body)
			if st != http.StatusCreated || m["bankStatus"] != tc.bank {
				t.Fatalf("got %d %s, want 201 %s", st, raw, tc.bank)
			}
			comment, _ := m["bankComment"].(string)
			if tc.field != "" && !strings.Contains(comment, tc.field) {
				t.Fatalf("bankComment %q does not name %s", comment, tc.field)
			}
			if tc.field == "" && comment != "" {
				t.Fatalf("bankComment %q, want none", comment)
			}
		})
	}
}
