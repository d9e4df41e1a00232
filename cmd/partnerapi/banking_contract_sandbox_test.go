package main

import (
	"strings"

	"partnerapi/internal/banking"
)

// sandboxPaymentCases covers POST /fintech/api/sandbox/payments/{id}/delete,
// the sandbox's stand-in for a bank user deleting a draft (reference §6).
// Its own documents are made first, one in each deletable status and one
// signed, so the rows do not depend on what paymentCases left behind.
func sandboxPaymentCases() []bankCase {
	const (
		pays                              = "/fintech/api/v1/payments"
		del                               = "/fintech/api/sandbox/payments/"
		draft, checked, half, signed, odd = "c3000000-0000-4000-8000-000000000001", "c3000000-0000-4000-8000-000000000002",
			"c3000000-0000-4000-8000-000000000003", "c3000000-0000-4000-8000-000000000004", "c3000000-0000-4000-8000-000000000005"
		unknown = "c3000000-0000-4000-8000-0000000000ff"
	)
	return []bankCase{
		{name: "create draft", method: "POST", path: pays, auth: "pay", body: bankDoc(draft, nil), status: 201},
		// 02 outside a budget payment fails a logical control: CHECKERROR.
		{name: "create CHECKERROR", method: "POST", path: pays, auth: "pay", body: bankDoc(checked, map[string]any{"operationCode": "02"}), status: 201},
		{name: "create half signed", method: "POST", path: pays, auth: "pay", body: bankDoc(half, map[string]any{"digestSignatures": signatures(banking.SandboxCertFirst)}), status: 201},
		{name: "create signed", method: "POST", path: pays, auth: "pay", body: bankDoc(signed, map[string]any{"digestSignatures": signatures(banking.SandboxCertSole)}), status: 201},
		{name: "create another draft", method: "POST", path: pays, auth: "pay", body: bankDoc(odd, nil), status: 201},

		{name: "delete draft with a comment", method: "POST", path: del + draft + "/delete", auth: "pay", body: `{"comment":"Удалён в CI"}`, status: 200},
		{name: "delete CHECKERROR without a body", method: "POST", path: del + checked + "/delete", auth: "pay", ctype: "application/json", status: 200},
		{name: "delete half signed with an empty object", method: "POST", path: del + half + "/delete", auth: "pay", body: `{}`, status: 200},
		{name: "delete signed", method: "POST", path: del + signed + "/delete", auth: "pay", body: `{}`, status: 400, cause: "WORKFLOW_FAULT"},
		{name: "delete deleted", method: "POST", path: del + draft + "/delete", auth: "pay", body: `{}`, status: 400, cause: "WORKFLOW_FAULT"},
		{name: "delete not JSON", method: "POST", path: del + odd + "/delete", auth: "pay", body: `{"comment":`, status: 400, cause: "DESERIALIZATION_FAULT", badRequest: true},
		{name: "delete comment too long", method: "POST", path: del + odd + "/delete", auth: "pay", body: `{"comment":"` + strings.Repeat("я", 211) + `"}`,
			status: 400, cause: "VALIDATION_FAULT", badRequest: true},
		{name: "delete unknown", method: "POST", path: del + unknown + "/delete", auth: "pay", body: `{}`, status: 404, cause: "DATA_NOT_FOUND_EXCEPTION"},
		{name: "delete without token", method: "POST", path: del + odd + "/delete", body: `{}`, status: 401, badRequest: true},
		{name: "delete without scope", method: "POST", path: del + odd + "/delete", auth: "invoice", body: `{}`, status: 403, cause: "ACTION_ACCESS_EXCEPTION"},
		{name: "delete over the rate limit", server: "limited", method: "POST", path: del + unknown + "/delete", auth: "limited pay", body: `{}`, status: 429, warm: true},
		{name: "delete in maintenance", server: "maint", method: "POST", path: del + unknown + "/delete", auth: "maint pay", body: `{}`, status: 503},
		{name: "delete over the body limit", method: "POST", path: del + odd + "/delete", auth: "pay", body: overLimit(`{"comment":"x"}`), status: 413, cause: "VALIDATION_FAULT"},
	}
}
