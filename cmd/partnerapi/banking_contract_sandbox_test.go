package main

import (
	"encoding/json"
	"strings"
	"time"

	"partnerapi/internal/banking"
)

// sandboxPaymentCases covers POST /fintech/api/sandbox/payments/{id}/delete,
// the sandbox's stand-in for a bank user deleting a draft (reference §6),
// and the edit beside it (sandboxEditCases).
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
	return append([]bankCase{
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
	}, sandboxEditCases()...)
}

// sandboxEditCases covers POST /fintech/api/sandbox/payments/{id}/edit, the
// sandbox's stand-in for a bank user correcting a document that failed its
// checks (reference §6, CHECKERROR ─edit─> CREATED), on documents of its
// own: a payment order and an invoice draft in CHECKERROR, and a draft.
func sandboxEditCases() []bankCase {
	const (
		pays                  = "/fintech/api/v1/payments"
		edit                  = "/fintech/api/sandbox/payments/"
		checked, inv, draft   = "c4000000-0000-4000-8000-000000000001", "c4000000-0000-4000-8000-000000000002", "c4000000-0000-4000-8000-000000000003"
		unknown               = "c4000000-0000-4000-8000-0000000000ff"
		failing, withoutTheID = `{"operationCode":"02"}`, `{"externalId":null}`
	)
	over := func(set string) map[string]any {
		var m map[string]any
		_ = json.Unmarshal([]byte(set), &m)
		return m
	}
	future := banking.BankDate(time.Now(), nil).AddDate(0, 0, 10).Format(time.DateOnly)
	return []bankCase{
		// 02 outside a budget payment fails a logical control: CHECKERROR.
		{name: "create CHECKERROR to edit", method: "POST", path: pays, auth: "pay", body: bankDoc(checked, over(failing)), status: 201},
		{name: "create CHECKERROR invoice draft to edit", method: "POST", path: pays + "/from-invoice", auth: "invoice",
			body: invoiceDoc(inv, map[string]any{"date": future}), status: 201},
		{name: "create draft not to edit", method: "POST", path: pays, auth: "pay", body: bankDoc(draft, nil), status: 201},

		{name: "edit still failing", method: "POST", path: edit + checked + "/edit", auth: "pay", body: bankDoc(checked, map[string]any{"operationCode": "02", "purpose": "Исправлено"}), status: 200},
		{name: "edit with signatures", method: "POST", path: edit + checked + "/edit", auth: "pay",
			body: bankDoc(checked, map[string]any{"digestSignatures": signatures(banking.SandboxCertSole)}), status: 400, cause: "VALIDATION_FAULT"},
		{name: "edit another externalId", method: "POST", path: edit + checked + "/edit", auth: "pay", body: bankDoc(unknown, nil), status: 400, cause: "VALIDATION_FAULT"},
		{name: "edit payer account of nobody", method: "POST", path: edit + checked + "/edit", auth: "pay",
			body: bankDoc(checked, map[string]any{"payerAccount": "40702810200000012345"}), status: 400, cause: "WORKFLOW_FAULT"},
		{name: "edit not JSON", method: "POST", path: edit + checked + "/edit", auth: "pay", body: `{"externalId":`, status: 400, cause: "DESERIALIZATION_FAULT", badRequest: true},
		{name: "edit corrected", method: "POST", path: edit + checked + "/edit", auth: "pay", body: bankDoc(checked, over(withoutTheID)), status: 200},
		{name: "edit CREATED", method: "POST", path: edit + checked + "/edit", auth: "pay", body: bankDoc(checked, nil), status: 400, cause: "WORKFLOW_FAULT"},
		{name: "edit invoice draft with PAY_DOC_RU", method: "POST", path: edit + inv + "/edit", auth: "pay", body: invoiceDoc(inv, nil), status: 403, cause: "ACTION_ACCESS_EXCEPTION"},
		{name: "edit invoice draft", method: "POST", path: edit + inv + "/edit", auth: "invoice", body: invoiceDoc(inv, nil), status: 200},
		{name: "edit as JWS", method: "POST", path: edit + draft + "/edit", auth: "pay", ctype: "application/jose", body: sandboxJWS(bankDoc(draft, nil)),
			status: 400, cause: "WORKFLOW_FAULT"},
		{name: "edit unknown", method: "POST", path: edit + unknown + "/edit", auth: "pay", body: bankDoc(unknown, nil), status: 404, cause: "DATA_NOT_FOUND_EXCEPTION"},
		{name: "edit without token", method: "POST", path: edit + draft + "/edit", body: bankDoc(draft, nil), status: 401, badRequest: true},
		{name: "edit without scope", method: "POST", path: edit + draft + "/edit", auth: "cards", body: bankDoc(draft, nil), status: 403, cause: "ACTION_ACCESS_EXCEPTION"},
		{name: "edit over the rate limit", server: "limited", method: "POST", path: edit + unknown + "/edit", auth: "limited pay", body: bankDoc(unknown, nil), status: 429, warm: true},
		{name: "edit in maintenance", server: "maint", method: "POST", path: edit + unknown + "/edit", auth: "maint pay", body: bankDoc(unknown, nil), status: 503},
		{name: "edit over the body limit", method: "POST", path: edit + draft + "/edit", auth: "pay", body: overLimit(bankDoc(draft, nil)), status: 413, cause: "VALIDATION_FAULT"},
	}
}
