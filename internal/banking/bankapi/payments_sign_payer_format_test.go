package bankapi

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"partnerapi/internal/banking"
)

// TestPaymentsPayerAccountFormat: a payerAccount that is not 20 digits, in
// /sign's body or GET …/digest's query, is a pattern failure, 400
// VALIDATION_FAULT naming payerAccount (reference §4: ^[0-9]{20}$; §13:
// patterns are VALIDATION_FAULT), whatever the document. Before, it was
// looked up as an account and refused as WORKFLOW_FAULT "not among the
// organisation's accounts", the answer of a well-formed account of
// another organisation, which still stands.
func TestPaymentsPayerAccountFormat(t *testing.T) {
	e := newPayEnv(t)
	e.svc.Payees = payeeDir{}
	id := newUUID(2000)
	if st, _, raw := e.do("POST", paymentsBase+"/from-invoice", "inv", invoiceDraft(id, nil)); st != 201 {
		t.Fatalf("draft: %d %s", st, raw)
	}
	for _, tc := range []struct {
		name, account string
		status        int
		cause         string
	}{
		{"three digits", "123", 400, "VALIDATION_FAULT"},
		{"21 digits", banking.SandboxAccount + "1", 400, "VALIDATION_FAULT"},
		{"letters", "4070281053883341173A", 400, "VALIDATION_FAULT"},
		{"spaces", " " + banking.SandboxAccount, 400, "VALIDATION_FAULT"},
		{"another organisation's account", otherOrgAcc, 400, "WORKFLOW_FAULT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			check := func(what string, st int, m map[string]any, raw string) {
				t.Helper()
				if st != tc.status || m["cause"] != tc.cause {
					t.Fatalf("%s: %d %s, want %d %s", what, st, raw, tc.status, tc.cause)
				}
				if names, _ := m["fieldNames"].([]any); tc.cause == "VALIDATION_FAULT" && !slices.Equal(names, []any{"payerAccount"}) {
					t.Fatalf("%s: %s, want fieldNames [payerAccount]", what, raw)
				}
			}
			b, _ := json.Marshal(map[string]any{"digestSignatures": sigs(banking.SandboxCertSole), "payerAccount": tc.account})
			st, m, raw := e.do("POST", paymentsBase+"/"+id+"/sign", "pay", string(b))
			check("sign", st, m, raw)
			st, m, raw = e.do("GET", paymentsBase+"/"+id+"/digest?payerAccount="+url.QueryEscape(tc.account), "pay", "")
			check("digest", st, m, raw)
			// The malformed account is refused before the document is
			// looked up: an unknown document answers the same.
			if tc.cause == "VALIDATION_FAULT" {
				st, m, raw = e.do("POST", paymentsBase+"/"+newUUID(2001)+"/sign", "pay", string(b))
				check("sign of an unknown document", st, m, raw)
			}
		})
	}
	if g := e.get(id); g["bankStatus"] != "CREATED" || g["payerAccount"] != nil && g["payerAccount"] != "" {
		t.Fatalf("refused draft changed: %v", g)
	}
	if st, _, raw := e.do("GET", paymentsBase+"/"+id+"/digest?payerAccount="+banking.SandboxAccount, "pay", ""); st != http.StatusOK {
		t.Fatalf("digest with the own account: %d %s", st, raw)
	}
}
