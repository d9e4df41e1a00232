package bankapi

import (
	"strings"
	"testing"

	"partnerapi/internal/banking"
)

// A payee account at a Bank of Russia division (its BIC ends in 000, 001 or 002) is
// checked with "0" + BIC digits 5–6 as the conditional bank number
// (reference §5.4): the right key is stored as is, a key right only with
// BIC digits 7–9 (000) is CHECKERROR naming payeeAccount.
func TestPaymentsPayeeAtBankOfRussiaDivision(t *testing.T) {
	e := newPayEnv(t)
	for i, tc := range []struct {
		name, account, bic string
		status             string
	}{
		{"key by 0 + BIC[4:6]", "40101810045250010041", "044525000", "CREATED"},
		{"key by BIC[6:9] only", "40101810945250010041", "044525000", "CHECKERROR"},
		// Digits 7–9 of 001 and 002 name Bank of Russia institutions too
		// (never a credit institution, whose numbers are 050–999), so
		// their accounts take the division's prefix as well.
		{"BIC ending 001: key by 0 + BIC[4:6]", "40101810045250010041", "044525001", "CREATED"},
		{"BIC ending 001: key by BIC[6:9] only", "40101810845250010041", "044525001", "CHECKERROR"},
		{"BIC ending 002: key by 0 + BIC[4:6]", "40101810045250010041", "044525002", "CREATED"},
		{"BIC ending 002: key by BIC[6:9] only", "40101810745250010041", "044525002", "CHECKERROR"},
		{"credit institution: key by BIC[6:9]", "40602810700000000025", "049805746", "CREATED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			over := map[string]any{"payeeAccount": tc.account, "payeeBankBic": tc.bic}
			if banking.BankOfRussiaDivision(tc.bic) {
				over["payeeBankCorrAccount"] = nil // a division has no correspondent account
			}
			st, m, raw := e.do("POST", paymentsBase, "pay", payDoc(newUUID(1700+i), over))
			if st != 201 || m["bankStatus"] != tc.status {
				t.Fatalf("%d %s, want 201 %s", st, raw, tc.status)
			}
			if comment, _ := m["bankComment"].(string); (tc.status == "CHECKERROR") != strings.Contains(comment, "payeeAccount") {
				t.Fatalf("bankComment %q", comment)
			}
		})
	}
}
