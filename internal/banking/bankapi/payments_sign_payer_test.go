package bankapi

import (
	"encoding/json"
	"strings"
	"testing"

	"partnerapi/internal/banking"
)

// A draft from an invoice names no payer: its signer completes it (reference
// §4.1), here by sending payerAccount with /sign, an open account of the
// signing organisation whose other payer details come from the bank's
// records and are signed with the rest. Without one, or with an account
// that is not the organisation's, /sign is 400 WORKFLOW_FAULT naming
// payerAccount and the draft stays as it was.
func TestPaymentsSignInvoiceDraftPayer(t *testing.T) {
	budget := map[string]any{"payeeName": "Казначейство России (ФНС России)", "payeeInn": "7727406020", "payeeKpp": "770701001",
		"payeeAccount": "03100643000000018500", "payeeBankBic": "017003983", "payeeBankCorrAccount": "40102810445370000059",
		"departmentalInfo": map[string]any{"drawerStatus101": "01", "kbk": banking.ENPKBK, "oktmo": "0", "reasonCode106": "0",
			"taxPeriod107": "0", "docNumber108": "0", "docDate109": "0", "uip": "0"}}
	for i, tc := range []struct {
		name   string
		path   string         // from-invoice route
		over   map[string]any // of the draft
		signs  []map[string]any
		status int    // of the last /sign
		want   string // bankStatus after it, or the field its refusal names
		kpp    string // payerKpp of the completed document
	}{
		{"no payerAccount", "/from-invoice", nil, []map[string]any{{}}, 400, "payerAccount", ""},
		{"another organisation's account", "/from-invoice", nil, []map[string]any{{"payerAccount": otherOrgAcc}}, 400, "payerAccount", ""},
		{"an account the bank does not know", "/from-invoice", nil, []map[string]any{{"payerAccount": "40702810200000012345"}}, 400, "payerAccount", ""},
		{"own account", "/from-invoice", nil, []map[string]any{{"payerAccount": banking.SandboxAccount}}, 200, "IMPLEMENTED", banking.SandboxOrgKPP},
		{"first signature completes, second keeps", "/from-invoice", nil, []map[string]any{
			{"payerAccount": banking.SandboxAccount, "cert": banking.SandboxCertFirst}, {"cert": banking.SandboxCertSecond}}, 200, "IMPLEMENTED", banking.SandboxOrgKPP},
		{"second signature names another payer", "/from-invoice", nil, []map[string]any{
			{"payerAccount": banking.SandboxAccount, "cert": banking.SandboxCertFirst}, {"payerAccount": otherOrgAcc, "cert": banking.SandboxCertSecond}}, 400, "payerAccount", banking.SandboxOrgKPP},
		{"ЕНП draft: payer KPP 0", "/from-invoice-budget", budget, []map[string]any{{"payerAccount": banking.SandboxAccount}}, 200, "IMPLEMENTED", "0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newPayEnv(t)
			e.svc.Payees = payeeDir{}
			id := newUUID(1900 + i)
			if st, _, raw := e.do("POST", paymentsBase+tc.path, "inv", invoiceDraft(id, tc.over)); st != 201 {
				t.Fatalf("draft: %d %s", st, raw)
			}
			// A state read of the draft before it is signed must not leave
			// its payer-less hash behind.
			if st, _, raw := e.do("GET", paymentsBase+"/"+id+"/state", "pay", ""); st != 200 {
				t.Fatalf("draft state: %d %s", st, raw)
			}
			var st int
			var m map[string]any
			var raw string
			for _, s := range tc.signs {
				cert, _ := s["cert"].(string)
				if cert == "" {
					cert = banking.SandboxCertSole
				}
				body := map[string]any{"digestSignatures": sigs(cert)}
				if acc, ok := s["payerAccount"]; ok {
					body["payerAccount"] = acc
				}
				b, _ := json.Marshal(body)
				st, m, raw = e.do("POST", paymentsBase+"/"+id+"/sign", "pay", string(b))
			}
			if st != tc.status {
				t.Fatalf("%d %s, want %d", st, raw, tc.status)
			}
			g := e.get(id)
			if st == 400 {
				if m["cause"] != "WORKFLOW_FAULT" || !strings.Contains(m["message"].(string), "payerAccount") {
					t.Fatalf("refusal %s", raw)
				}
				if len(tc.signs) == 1 && (g["bankStatus"] != "CREATED" || g["payerAccount"] != nil && g["payerAccount"] != "") {
					t.Fatalf("refused draft changed: %v", g)
				}
				return
			}
			if g["bankStatus"] != tc.want || g["payerAccount"] != banking.SandboxAccount || g["payerInn"] != payOrgINNs[payOrg] ||
				g["payerBankBic"] != banking.SandboxBIC || g["payerBankCorrAccount"] != banking.SandboxCorrAccount ||
				g["payerName"] != "ООО «Песочница»" || g["payerKpp"] != tc.kpp {
				t.Fatalf("completed document %v", g)
			}
			// The signed digest is the completed document's, the one GET …/digest answers now.
			signed := e.ver.digests[len(e.ver.digests)-1]
			if !strings.Contains(signed, "\npayerAccount="+banking.SandboxAccount+"\n") {
				t.Fatalf("signed digest without the payer:\n%s", signed)
			}
			if dst, _, digest := e.do("GET", paymentsBase+"/"+id+"/digest", "pay", ""); dst != 200 || digest != signed {
				t.Fatalf("digest after signing %d:\n%s\nsigned:\n%s", dst, digest, signed)
			}
			if st, s, _ := e.do("GET", paymentsBase+"/"+id+"/state", "pay", ""); st != 200 || s["crucialFieldsHash"] != g["crucialFieldsHash"] {
				t.Fatalf("state %v, document %v", s, g)
			}
		})
	}
}

// GET …/digest?payerAccount= answers a payer-less invoice draft's digest as
// /sign with that account completes it, without changing the draft, so a
// signer outside the sandbox signs the text /sign verifies; an account that
// is not the organisation's is refused as /sign refuses it.
func TestPaymentsDigestWithPayerAccount(t *testing.T) {
	e := newPayEnv(t)
	e.svc.Payees = payeeDir{}
	id := newUUID(1950)
	if st, _, raw := e.do("POST", paymentsBase+"/from-invoice", "inv", invoiceDraft(id, nil)); st != 201 {
		t.Fatalf("draft: %d %s", st, raw)
	}
	_, _, bare := e.do("GET", paymentsBase+"/"+id+"/digest", "pay", "")
	for _, tc := range []struct {
		name, account string
		status        int
	}{
		{"own account", banking.SandboxAccount, 200},
		{"another organisation's account", otherOrgAcc, 400},
		{"none", "", 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, _, raw := e.do("GET", paymentsBase+"/"+id+"/digest?payerAccount="+tc.account, "pay", "")
			if st != tc.status {
				t.Fatalf("%d %s, want %d", st, raw, tc.status)
			}
			switch {
			case st == 400 && (!strings.Contains(raw, "WORKFLOW_FAULT") || !strings.Contains(raw, "payerAccount")):
				t.Fatalf("refusal %s", raw)
			case st == 200 && tc.account == "" && raw != bare:
				t.Fatalf("digest without payerAccount changed:\n%s", raw)
			case st == 200 && tc.account != "" && !strings.Contains(raw, "\npayerAccount="+tc.account+"\n"):
				t.Fatalf("digest without the payer:\n%s", raw)
			}
		})
	}
	if g := e.get(id); g["payerAccount"] != nil && g["payerAccount"] != "" {
		t.Fatalf("the draft changed: %v", g)
	}
	// The digest shown is the one /sign verifies.
	_, _, shown := e.do("GET", paymentsBase+"/"+id+"/digest?payerAccount="+banking.SandboxAccount, "pay", "")
	b, _ := json.Marshal(map[string]any{"digestSignatures": sigs(banking.SandboxCertSole), "payerAccount": banking.SandboxAccount})
	if st, _, raw := e.do("POST", paymentsBase+"/"+id+"/sign", "pay", string(b)); st != 200 || e.ver.digests[len(e.ver.digests)-1] != shown {
		t.Fatalf("sign %d %s: signed digest differs from the one shown", st, raw)
	}
}
