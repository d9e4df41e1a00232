package main

import (
	"encoding/json"
	"testing"
	"time"

	"partnerapi/internal/banking"
)

// The signature-set rules of reference §7 and §9.1 through the real server
// and its sandbox verifier, at creation and when a draft is signed later:
// more than two signatures, and a sole-authority or qualified (UKEP_UL)
// signature combined with any other, are a 400 WORKFLOW_FAULT, and the
// document keeps its status. A qualified signature is valid only alone.
func TestBankingSignatureSets(t *testing.T) {
	ts := startServer(t)
	base := ts.urls["banking"] + "/fintech/api/v1/payments"
	tok := bankingToken(t, ts, "PAY_DOC_RU")
	call := func(method, url string, body any) (int, map[string]any) {
		t.Helper()
		return bankRequestJSON(t, method, url, tok, body)
	}
	sigs := func(certs ...string) []any {
		var out []any
		for _, c := range certs {
			s := map[string]any{"base64Encoded": "MIIB", "certificateUuid": c}
			if c == banking.SandboxCertQualified {
				s["signType"] = "UKEP_UL"
			}
			out = append(out, s)
		}
		return out
	}
	doc := func(id string, certs ...string) map[string]any {
		m := map[string]any{
			"externalId": id, "date": time.Now().UTC().Format(time.DateOnly), "amount": json.Number("10.01"), "operationCode": "01",
			"priority": "5", "purpose": "Оплата, без НДС", "payerName": "ООО Песочница", "payerInn": banking.SandboxOrgINN,
			"payerAccount": banking.SandboxAccount, "payerBankBic": banking.SandboxBIC, "payerBankCorrAccount": banking.SandboxCorrAccount,
			"payeeName": "АО Лютик", "payeeInn": "7830002293", "payeeAccount": "40602810700000000025",
			"payeeBankBic": "049805746", "payeeBankCorrAccount": "30101810800000000746",
		}
		if certs != nil {
			m["digestSignatures"] = sigs(certs...)
		}
		return m
	}
	first, second, sole, qual := banking.SandboxCertFirst, banking.SandboxCertSecond, banking.SandboxCertSole, banking.SandboxCertQualified
	for i, tc := range []struct {
		name    string
		created []string // signatures at creation (nil: a draft)
		status  string   // the status after creation
		later   []string // signatures of a later sign call (nil: none)
		code    int      // the answer of the last call
		want    string   // its bankStatus or cause
	}{
		{"three at creation", []string{first, second, sole}, "", nil, 400, "WORKFLOW_FAULT"},
		{"three with qualified at creation", []string{first, second, qual}, "", nil, 400, "WORKFLOW_FAULT"},
		{"qualified with first at creation", []string{qual, first}, "", nil, 400, "WORKFLOW_FAULT"},
		{"qualified alone later", nil, "CREATED", []string{qual}, 200, "IMPLEMENTED"},
		{"second after first", []string{first}, "PARTSIGNED", []string{second}, 200, "IMPLEMENTED"},
		{"qualified after first", []string{first}, "PARTSIGNED", []string{qual}, 400, "WORKFLOW_FAULT"},
		{"qualified after second", []string{second}, "PARTSIGNED", []string{qual}, 400, "WORKFLOW_FAULT"},
		{"sole after first", []string{first}, "PARTSIGNED", []string{sole}, 400, "WORKFLOW_FAULT"},
		{"three later", nil, "CREATED", []string{first, second, sole}, 400, "WORKFLOW_FAULT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := "e0000000-0000-4000-8000-0000000000" + string(rune('a'+i/10)) + string(rune('0'+i%10))
			st, m := call("POST", base, doc(id, tc.created...))
			if tc.later == nil {
				if st != tc.code || m["cause"] != tc.want {
					t.Fatalf("create: %d %v, want %d %s", st, m, tc.code, tc.want)
				}
				return
			}
			if st != 201 || m["bankStatus"] != tc.status {
				t.Fatalf("create: %d %v, want 201 %s", st, m, tc.status)
			}
			st, m = call("POST", base+"/"+id+"/sign", map[string]any{"digestSignatures": sigs(tc.later...)})
			got := m["bankStatus"]
			if st >= 400 {
				got = m["cause"]
			}
			if st != tc.code || got != tc.want {
				t.Fatalf("sign: %d %v, want %d %s", st, m, tc.code, tc.want)
			}
			// A refused signature leaves the document as it was.
			if st >= 400 {
				if st, m := call("GET", base+"/"+id+"/state", nil); st != 200 || m["bankStatus"] != tc.status {
					t.Fatalf("state after refusal: %d %v, want %s", st, m, tc.status)
				}
			}
		})
	}
}
