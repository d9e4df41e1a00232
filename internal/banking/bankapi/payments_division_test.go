package bankapi

import (
	"strings"
	"testing"
)

// A payee account at a Bank of Russia division (its BIC ends in 000) is
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
		{"credit institution: key by BIC[6:9]", "40602810700000000025", "049805746", "CREATED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			over := map[string]any{"payeeAccount": tc.account, "payeeBankBic": tc.bic}
			if strings.HasSuffix(tc.bic, "000") {
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
