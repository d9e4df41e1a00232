package bankapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"partnerapi/internal/banking"
)

// TestInvoiceDraftIgnoresSentPayer: a draft from an invoice names no payer
// (reference §4.1: the signer completes it, here /sign's payerAccount, with
// the payer's details from the bank's records), so payer members sent to
// the three from-invoice operations, which are not in their bodies, are
// dropped like any other unknown member. Before, they were stored as sent:
// a draft with a made-up payerInn and payerName and no payer bank was then
// signed without payerAccount and executed as IMPLEMENTED with that payer.
func TestInvoiceDraftIgnoresSentPayer(t *testing.T) {
	e := newPayEnv(t)
	e.svc.Payees = payeeDir{}
	payer := map[string]any{"payerAccount": banking.SandboxAccount, "payerInn": "1234567890", "payerName": "X",
		"payerKpp": "123456789", "payerBankBic": "044525999", "payerBankCorrAccount": "30101810400000000999"}
	anyPayee := map[string]any{"isPaidByCredit": false, "payeeBankBic": "049805746", "payeeBankCorrAccount": "30101810800000000746",
		"payeeInn": "7830002293", "payeeName": "АО Лютик", "payeeAccount": "40602810700000000025"}
	for i, path := range []string{"/from-invoice", "/from-invoice-any"} {
		t.Run(path, func(t *testing.T) {
			id := newUUID(2200 + i)
			over := merge(payer, nil)
			if path == "/from-invoice-any" {
				over = merge(payer, anyPayee)
			}
			st, m, raw := e.do("POST", paymentsBase+path, "inv", invoiceDraft(id, over))
			if st != http.StatusCreated || m["bankStatus"] != "CREATED" {
				t.Fatalf("draft: %d %s", st, raw)
			}
			for k := range payer {
				if v, ok := m[k]; ok && v != nil && v != "" {
					t.Fatalf("draft keeps %s=%v: %s", k, v, raw)
				}
			}
			if _, _, digest := e.do("GET", paymentsBase+"/"+id+"/digest", "pay", ""); !strings.Contains(digest, "\npayerInn=\n") {
				t.Fatalf("digest names a payer:\n%s", digest)
			}
			// The signer must still say which account pays.
			b, _ := json.Marshal(map[string]any{"digestSignatures": sigs(banking.SandboxCertSole)})
			if st, m, raw := e.do("POST", paymentsBase+"/"+id+"/sign", "pay", string(b)); st != 400 || m["cause"] != "WORKFLOW_FAULT" {
				t.Fatalf("sign without payerAccount: %d %s", st, raw)
			}
			b, _ = json.Marshal(map[string]any{"digestSignatures": sigs(banking.SandboxCertSole), "payerAccount": banking.SandboxAccount})
			if st, m, raw := e.do("POST", paymentsBase+"/"+id+"/sign", "pay", string(b)); st != 200 || m["bankStatus"] != "IMPLEMENTED" {
				t.Fatalf("sign: %d %s", st, raw)
			}
			g := e.get(id)
			if g["payerInn"] != payOrgINNs[payOrg] || g["payerName"] != "ООО «Песочница»" || g["payerBankBic"] != banking.SandboxBIC ||
				g["payerBankCorrAccount"] != banking.SandboxCorrAccount || g["payerKpp"] != banking.SandboxOrgKPP {
				t.Fatalf("executed with payer %v %v %v %v %v", g["payerInn"], g["payerName"], g["payerBankBic"], g["payerBankCorrAccount"], g["payerKpp"])
			}
		})
	}
}
