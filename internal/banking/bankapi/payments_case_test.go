package bankapi

import (
	"encoding/json"
	"strings"
	"testing"

	"partnerapi/internal/banking"
)

// A payment's externalId is one document whatever the case of its UUID:
// GET, /state and /sign find it by either case, a second create in another
// case is 400 WORKFLOW_FAULT, and the document answers with the partner's
// own text.
func TestPaymentExternalIDCase(t *testing.T) {
	const upper = "3A000000-0000-4000-8000-0000000000AB"
	lower := strings.ToLower(upper)
	e := newPayEnv(t)
	signBody, _ := json.Marshal(map[string]any{"digestSignatures": sigs(banking.SandboxCertSole)})
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		want                     string // in the answer
	}{
		{"create in upper case", "POST", paymentsBase, payDoc(upper, nil), 201, `"externalId":"` + upper + `"`},
		{"create again in lower case", "POST", paymentsBase, payDoc(lower, nil), 400, "WORKFLOW_FAULT"},
		{"create again in upper case", "POST", paymentsBase, payDoc(upper, nil), 400, "WORKFLOW_FAULT"},
		{"get by the lower case", "GET", paymentsBase + "/" + lower, "", 200, `"externalId":"` + upper + `"`},
		{"state by the lower case", "GET", paymentsBase + "/" + lower + "/state", "", 200, `"bankStatus":"CREATED"`},
		{"sign by the lower case", "POST", paymentsBase + "/" + lower + "/sign", string(signBody), 200, `"bankStatus":"IMPLEMENTED"`},
		{"get by the upper case", "GET", paymentsBase + "/" + upper, "", 200, `"bankStatus":"IMPLEMENTED"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, _, raw := e.do(tc.method, tc.path, "pay", tc.body)
			if st != tc.status || !strings.Contains(raw, tc.want) {
				t.Fatalf("%d %s, want %d with %s", st, raw, tc.status, tc.want)
			}
		})
	}
}

// Member names match exactly, as the bank's do (encoding/json alone would
// take any case): a required member spelled in another case is missing,
// and next to its exact spelling it is ignored whichever comes first. The
// same holds inside departmentalInfo and for the sign body.
func TestPaymentMemberNameCase(t *testing.T) {
	e := newPayEnv(t)
	for i, tc := range []struct {
		name   string
		over   map[string]any
		status int
		want   string // in the answer
	}{
		{"Amount for amount", map[string]any{"amount": nil, "Amount": json.Number("7.00")}, 400, `"fieldNames":["amount"]`},
		{"PURPOSE for purpose", map[string]any{"purpose": nil, "PURPOSE": "Оплата"}, 400, `"fieldNames":["purpose"]`},
		{"AMOUNT beside amount", map[string]any{"AMOUNT": json.Number("9.00")}, 201, `"amount":1500.50`},
		{"AMOUNT beside amount, not a number", map[string]any{"AMOUNT": "nine"}, 201, `"amount":1500.50`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, _, raw := e.do("POST", paymentsBase, "pay", payDoc(newUUID(9900+i), tc.over))
			if st != tc.status || !strings.Contains(raw, tc.want) {
				t.Fatalf("%d %s, want %d with %s", st, raw, tc.status, tc.want)
			}
		})
	}
	id := newUUID(9950)
	if st, _, raw := e.do("POST", paymentsBase, "pay", payDoc(id, nil)); st != 201 {
		t.Fatalf("draft: %d %s", st, raw)
	}
	signBody, _ := json.Marshal(map[string]any{"DigestSignatures": sigs(banking.SandboxCertSole)})
	if st, _, raw := e.do("POST", paymentsBase+"/"+id+"/sign", "pay", string(signBody)); st != 400 || !strings.Contains(raw, "VALIDATION_FAULT") {
		t.Fatalf("sign with DigestSignatures: %d %s, want 400 VALIDATION_FAULT", st, raw)
	}
}
