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

// TestInvoiceDraftPayeeFromRecords: a draft from the requester's own
// invoice (/from-invoice) pays the requester's own account (reference
// §4.1, whose body has payeeAccount alone), so its payee is the bank's
// record of that account and its organisation: name, INN, KPP, BIC and
// correspondent account, whatever the request said of them. Before, payee
// members sent were stored unchecked (an INN failing its check digit, a
// BIC not the account's bank) and signed and executed as they were, and a
// draft that sent none was executed with no payee bank at all.
func TestInvoiceDraftPayeeFromRecords(t *testing.T) {
	e := newPayEnv(t)
	e.svc.Payees = payeeDir{}
	for i, tc := range []struct {
		name string
		over map[string]any
	}{
		{"payee account alone", nil},
		{"made-up payee details", map[string]any{"payeeInn": "1234567890", "payeeName": "X", "payeeKpp": "999999999",
			"payeeBankBic": "044525999", "payeeBankCorrAccount": "30101810400000000999"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := newUUID(2210 + i)
			st, m, raw := e.do("POST", paymentsBase+"/from-invoice", "inv", invoiceDraft(id, tc.over))
			if st != http.StatusCreated || m["bankStatus"] != "CREATED" {
				t.Fatalf("draft: %d %s", st, raw)
			}
			want := map[string]any{"payeeAccount": banking.SandboxAccount, "payeeName": "ООО «Песочница»", "payeeInn": payOrgINNs[payOrg],
				"payeeKpp": banking.SandboxOrgKPP, "payeeBankBic": banking.SandboxBIC, "payeeBankCorrAccount": banking.SandboxCorrAccount}
			for k, v := range want {
				if m[k] != v {
					t.Fatalf("draft %s=%v, want %v: %s", k, m[k], v, raw)
				}
			}
			b, _ := json.Marshal(map[string]any{"digestSignatures": sigs(banking.SandboxCertSole), "payerAccount": banking.SandboxAccount})
			if st, m, raw := e.do("POST", paymentsBase+"/"+id+"/sign", "pay", string(b)); st != 200 || m["bankStatus"] != "IMPLEMENTED" {
				t.Fatalf("sign: %d %s", st, raw)
			}
			signed := e.ver.digests[len(e.ver.digests)-1]
			for _, line := range []string{"payeeBankBic=" + banking.SandboxBIC, "payeeInn=" + payOrgINNs[payOrg], "payeeName=ООО «Песочница»"} {
				if !strings.Contains(signed, "\n"+line+"\n") {
					t.Fatalf("signed digest without %s:\n%s", line, signed)
				}
			}
			g := e.get(id)
			for k, v := range want {
				if g[k] != v {
					t.Fatalf("executed %s=%v, want %v", k, g[k], v)
				}
			}
		})
	}
}
