package main

import (
	"crypto/rand"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/gost"
)

// sandboxJWS is body as a compact JWS under the sandbox's sole-authority
// certificate, signed with a key of its own: the sandbox takes its fixed
// certificates whatever key signed (reference §7), as the card cases do.
func sandboxJWS(body string) string {
	key, err := gost.GenerateKey(gost.TC26256A, rand.Reader)
	if err != nil {
		panic(err)
	}
	jws, err := gost.SignJWS([]byte(body), banking.SandboxCertSole, key)
	if err != nil {
		panic(err)
	}
	return jws
}

// bankDoc is a sandbox payment order from the sandbox organisation's
// account, with the fields of set over the defaults (nil deletes one).
func bankDoc(id string, set map[string]any) string {
	m := map[string]any{
		"externalId": id, "date": time.Now().UTC().Format(time.DateOnly), "amount": json.Number("10.01"), "operationCode": "01", "priority": "5",
		"purpose": "Оплата по договору 1, без НДС", "payerName": "ООО Песочница", "payerInn": banking.SandboxOrgINN, "payerKpp": banking.SandboxOrgKPP,
		"payerAccount": banking.SandboxAccount, "payerBankBic": banking.SandboxBIC, "payerBankCorrAccount": banking.SandboxCorrAccount,
		"payeeName": "АО Лютик", "payeeInn": "7830002293", "payeeKpp": "781301001", "payeeAccount": "40602810700000000025",
		"payeeBankBic": "049805746", "payeeBankCorrAccount": "30101810800000000746",
	}
	return overlaid(m, set)
}

// jsonNull is an explicit null member in bankDoc's and invoiceDoc's set,
// where nil removes the member.
var jsonNull = json.RawMessage("null")

// overlaid is the JSON of base with set laid over it: a value replaces
// base's, a nil removes the member.
func overlaid(base, set map[string]any) string {
	for k, v := range set {
		if v == nil {
			delete(base, k)
		} else {
			base[k] = v
		}
	}
	b, _ := json.Marshal(base)
	return string(b)
}

// signatures is digestSignatures with one sandbox certificate each.
func signatures(certs ...string) []map[string]string {
	var out []map[string]string
	for _, c := range certs {
		s := map[string]string{"base64Encoded": "MIIB", "certificateUuid": c}
		if c == banking.SandboxCertQualified {
			s["signType"] = "UKEP_UL"
		}
		out = append(out, s)
	}
	return out
}

// invoiceDoc is an invoice draft to the sandbox organisation's own account
// (reference §4.1), with set over the defaults.
func invoiceDoc(id string, set map[string]any) string {
	m := map[string]any{"externalId": id, "amount": json.Number("150.50"), "date": time.Now().UTC().Format(time.DateOnly),
		"purpose": "Оплата по счёту 7, без НДС", "payeeAccount": banking.SandboxAccount, "operationCode": "01", "priority": "5"}
	return overlaid(m, set)
}

// paymentCases covers the payment operations (reference §4, §7, §8, §9).
// Documents are made by earlier rows: p1 a draft, p2 signed, p3 half
// signed, later signed by the sign rows.
func paymentCases() []bankCase {
	const (
		p1, p2, p3, p4 = "c0000000-0000-4000-8000-000000000001", "c0000000-0000-4000-8000-000000000002", "c0000000-0000-4000-8000-000000000003", "c0000000-0000-4000-8000-000000000004"
		unknown        = "c0000000-0000-4000-8000-0000000000ff"
		pays           = "/fintech/api/v1/payments"
	)
	sole := map[string]any{"digestSignatures": signatures(banking.SandboxCertSole)}
	sign := func(certs ...string) string {
		b, _ := json.Marshal(map[string]any{"digestSignatures": signatures(certs...)})
		return string(b)
	}
	payee := func(set map[string]any) map[string]any {
		m := map[string]any{"payeeBankBic": banking.SandboxBIC, "payeeBankCorrAccount": banking.SandboxCorrAccount, "payeeInn": banking.SandboxOrgINN,
			"payeeKpp": banking.SandboxOrgKPP, "payeeName": "ООО Песочница", "isPaidByCredit": false}
		for k, v := range set {
			m[k] = v
		}
		return m
	}
	// A budget draft pays the single tax payment's payee, the treasury
	// (reference §4.1, §5.8), not the organisation itself.
	budget := payee(map[string]any{"isPaidByCredit": nil, "payeeName": "Казначейство России (ФНС России)", "payeeInn": banking.ENPPayeeINN,
		"payeeKpp": "770701001", "payeeAccount": banking.ENPPayeeAccount, "payeeBankBic": banking.ENPPayeeBIC, "payeeBankCorrAccount": banking.ENPPayeeCorrAcc,
		"departmentalInfo": map[string]any{"drawerStatus101": "01", "kbk": banking.ENPKBK, "oktmo": "0",
			"reasonCode106": "0", "taxPeriod107": "0", "docNumber108": "0", "docDate109": "0", "paymentKind110": nil, "uip": "0"}})
	future := banking.BankDate(time.Now(), nil).AddDate(0, 0, 10).Format(time.DateOnly)
	return []bankCase{
		{name: "create draft", method: "POST", path: pays, auth: "pay", body: bankDoc(p1, nil), status: 201},
		{name: "create signed sole", method: "POST", path: pays, auth: "pay bare", body: bankDoc(p2, sole), status: 201},
		{name: "create first signature", method: "POST", path: pays, auth: "pay", body: bankDoc(p3, map[string]any{"digestSignatures": signatures(banking.SandboxCertFirst)}), status: 201},
		{name: "create qualified", method: "POST", path: pays, auth: "pay", body: bankDoc("c0000000-0000-4000-8000-000000000005", map[string]any{"digestSignatures": signatures(banking.SandboxCertQualified)}), status: 201},
		{name: "create departmentalInfo malformed", method: "POST", path: pays, auth: "pay",
			body: bankDoc(p4, map[string]any{"departmentalInfo": map[string]any{"drawerStatus101": "99", "kbk": "1", "oktmo": "x"}}), status: 201},
		{name: "create departmentalInfo null", method: "POST", path: pays, auth: "pay",
			body: bankDoc("c0000000-0000-4000-8000-000000000006", map[string]any{"departmentalInfo": nil}), status: 201},
		{name: "create without token", method: "POST", path: pays, body: bankDoc("c0000000-0000-4000-8000-000000000010", nil), status: 401, cause: "UNAUTHORIZED", badRequest: true},
		{name: "create bad token", method: "POST", path: pays, auth: "bad", body: bankDoc("c0000000-0000-4000-8000-000000000010", nil), status: 401, cause: "UNAUTHORIZED"},
		{name: "create without scope", method: "POST", path: pays, auth: "invoice", body: bankDoc("c0000000-0000-4000-8000-000000000010", nil), status: 403, cause: "ACTION_ACCESS_EXCEPTION"},
		{name: "create not JSON", method: "POST", path: pays, auth: "pay", body: `{"externalId":`, status: 400, cause: "DESERIALIZATION_FAULT", badRequest: true},
		// A body as a compact JWS (reference §1, §9.6): in the sandbox the
		// kid, a fixed certificate, decides whichever key signed (§7).
		{name: "create as JWS", method: "POST", path: pays, auth: "pay", ctype: "application/jose",
			body: sandboxJWS(bankDoc("c0000000-0000-4000-8000-0000000000e1", nil)), status: 201},
		{name: "create as JWS without kid", method: "POST", path: pays, auth: "pay", ctype: "application/jose",
			body: "eyJhbGciOiJnb3N0MzQuMTAtMjAxMiJ9.e30.AAAA", status: 400, cause: "WORKFLOW_FAULT"},
		{name: "create as JWS that is not one", method: "POST", path: pays, auth: "pay", ctype: "application/jose", body: "abc", status: 400, cause: "DESERIALIZATION_FAULT"},
		{name: "create amount a string", method: "POST", path: pays, auth: "pay", body: bankDoc("c0000000-0000-4000-8000-000000000011", map[string]any{"amount": "ten"}),
			status: 400, cause: "DESERIALIZATION_FAULT", badRequest: true},
		{name: "create payer account short", method: "POST", path: pays, auth: "pay", body: bankDoc("c0000000-0000-4000-8000-000000000012", map[string]any{"payerAccount": "4070281053883341173"}),
			status: 400, cause: "VALIDATION_FAULT", badRequest: true},
		{name: "create without payer name", method: "POST", path: pays, auth: "pay", body: bankDoc("c0000000-0000-4000-8000-000000000013", map[string]any{"payerName": nil}),
			status: 400, cause: "VALIDATION_FAULT", badRequest: true},
		// The contract's PaymentOrderInput requires what the validation does,
		// and its INN and KPP patterns are the forms the validation takes
		// (reference §5.1, §5.2): a check digit is no pattern's business.
		{name: "create empty body", method: "POST", path: pays, auth: "pay", body: `{}`, status: 400, cause: "VALIDATION_FAULT", badRequest: true},
		{name: "create purpose over 210", method: "POST", path: pays, auth: "pay",
			body: bankDoc("c0000000-0000-4000-8000-000000000f20", map[string]any{"purpose": strings.Repeat("а", 211)}), status: 400, cause: "VALIDATION_FAULT", badRequest: true},
		{name: "create payer INN opening with 00", method: "POST", path: pays, auth: "pay",
			body: bankDoc("c0000000-0000-4000-8000-000000000f21", map[string]any{"payerInn": "0012345678"}), status: 400, cause: "VALIDATION_FAULT", badRequest: true},
		{name: "create payee INN of 11 digits", method: "POST", path: pays, auth: "pay",
			body: bankDoc("c0000000-0000-4000-8000-000000000f22", map[string]any{"payeeInn": "78300022930"}), status: 400, cause: "VALIDATION_FAULT", badRequest: true},
		{name: "create payee KPP of 8 digits", method: "POST", path: pays, auth: "pay",
			body: bankDoc("c0000000-0000-4000-8000-000000000f23", map[string]any{"payeeKpp": "78130100"}), status: 400, cause: "VALIDATION_FAULT", badRequest: true},
		// Letters in a KPP's reason code are its form, and a KPP opening
		// with 00 fails a check (CHECKERROR), not the form: the contract
		// takes both.
		{name: "create payee KPP with letters", method: "POST", path: pays, auth: "pay",
			body: bankDoc("c0000000-0000-4000-8000-000000000f24", map[string]any{"payeeKpp": "7813AB001"}), status: 201},
		{name: "create payee KPP opening with 00", method: "POST", path: pays, auth: "pay",
			body: bankDoc("c0000000-0000-4000-8000-000000000f25", map[string]any{"payeeKpp": "001301001"}), status: 201},
		// The server reads null anywhere a value goes as no value, so null in
		// an optional member is taken and in a required one is that member
		// missing; the contract says both.
		{name: "create optional members null", method: "POST", path: pays, auth: "pay",
			body: bankDoc("c0000000-0000-4000-8000-000000000f26", map[string]any{"payeeKpp": jsonNull, "voCode": jsonNull, "urgencyCode": jsonNull,
				"deliveryKind": jsonNull, "incomeTypeCode": jsonNull, "creditContractNumber": jsonNull, "isPaidByCredit": jsonNull, "vat": jsonNull,
				"digestSignatures": jsonNull, "number": jsonNull, "linkedDocs": jsonNull}), status: 201},
		{name: "create externalId null", method: "POST", path: pays, auth: "pay",
			body: bankDoc("c0000000-0000-4000-8000-000000000f27", map[string]any{"externalId": jsonNull}), status: 400, cause: "VALIDATION_FAULT", badRequest: true},
		{name: "create duplicate externalId", method: "POST", path: pays, auth: "pay", body: bankDoc(p1, nil), status: 400, cause: "WORKFLOW_FAULT"},
		{name: "create unknown certificate", method: "POST", path: pays, auth: "pay",
			body: bankDoc("c0000000-0000-4000-8000-000000000014", map[string]any{"digestSignatures": signatures("11111111-1111-4111-8111-111111111111")}), status: 400, cause: "WORKFLOW_FAULT"},
		{name: "create certificateUuid no UUID", method: "POST", path: pays, auth: "pay",
			body: bankDoc("c0000000-0000-4000-8000-000000000f14", map[string]any{"digestSignatures": signatures("cert-1")}), status: 400, cause: "VALIDATION_FAULT", badRequest: true},
		{name: "create sole with first", method: "POST", path: pays, auth: "pay",
			body: bankDoc("c0000000-0000-4000-8000-000000000015", map[string]any{"digestSignatures": signatures(banking.SandboxCertSole, banking.SandboxCertFirst)}), status: 400, cause: "WORKFLOW_FAULT"},
		{name: "create over the rate limit", server: "limited", method: "POST", path: pays, auth: "limited pay", body: bankDoc("c0000000-0000-4000-8000-000000000016", nil),
			status: 429, cause: "TOO_MANY_REQUESTS", warm: true},
		{name: "create in maintenance", server: "maint", method: "POST", path: pays, auth: "maint pay", body: bankDoc("c0000000-0000-4000-8000-000000000017", nil),
			status: 503, cause: "UNAVAILABLE_RESOURCE_EXCEPTION"},

		{name: "create over the body limit", method: "POST", path: pays, auth: "pay", body: overLimit(bankDoc("c0000000-0000-4000-8000-000000000018", nil)),
			status: 413, cause: "VALIDATION_FAULT"},
		{name: "from-invoice", method: "POST", path: pays + "/from-invoice?backUrl=https://partner.example/back", auth: "invoice", body: invoiceDoc("c1000000-0000-4000-8000-000000000001", nil), status: 201},
		{name: "from-invoice ten days ahead", method: "POST", path: pays + "/from-invoice", auth: "invoice",
			body: invoiceDoc("c1000000-0000-4000-8000-000000000002", map[string]any{"date": future}), status: 201},
		{name: "from-invoice without token", method: "POST", path: pays + "/from-invoice", body: invoiceDoc("c1000000-0000-4000-8000-000000000003", nil), status: 401, badRequest: true},
		{name: "from-invoice without scope", method: "POST", path: pays + "/from-invoice", auth: "pay", body: invoiceDoc("c1000000-0000-4000-8000-000000000003", nil), status: 403},
		{name: "from-invoice not JSON", method: "POST", path: pays + "/from-invoice", auth: "invoice", body: `[`, status: 400, cause: "DESERIALIZATION_FAULT", badRequest: true},
		// A draft from an invoice is an InvoiceDraftInput: priority 4 or 5
		// and operationCode 01 only (reference §4.1).
		{name: "from-invoice empty body", method: "POST", path: pays + "/from-invoice", auth: "invoice", body: `{}`, status: 400, cause: "VALIDATION_FAULT", badRequest: true},
		{name: "from-invoice priority 3", method: "POST", path: pays + "/from-invoice", auth: "invoice",
			body: invoiceDoc("c1000000-0000-4000-8000-000000000006", map[string]any{"priority": "3"}), status: 400, cause: "VALIDATION_FAULT", badRequest: true},
		{name: "from-invoice operationCode 02", method: "POST", path: pays + "/from-invoice", auth: "invoice",
			body: invoiceDoc("c1000000-0000-4000-8000-000000000007", map[string]any{"operationCode": "02"}), status: 400, cause: "VALIDATION_FAULT", badRequest: true},
		{name: "from-invoice over the rate limit", server: "limited", method: "POST", path: pays + "/from-invoice", auth: "limited invoice",
			body: invoiceDoc("c1000000-0000-4000-8000-000000000004", nil), status: 429, warm: true},
		{name: "from-invoice in maintenance", server: "maint", method: "POST", path: pays + "/from-invoice", auth: "maint invoice",
			body: invoiceDoc("c1000000-0000-4000-8000-000000000004", nil), status: 503},
		// Every invoice draft pays the requester's own account (reference
		// §4.1); -any and -budget add the payee's bank details.
		{name: "from-invoice over the body limit", method: "POST", path: pays + "/from-invoice", auth: "invoice",
			body: overLimit(invoiceDoc("c1000000-0000-4000-8000-000000000005", nil)), status: 413, cause: "VALIDATION_FAULT"},
		{name: "from-invoice-any", method: "POST", path: pays + "/from-invoice-any", auth: "invoice any", body: invoiceDoc("c1000000-0000-4000-8000-000000000011", payee(nil)), status: 201},
		{name: "from-invoice-any without token", method: "POST", path: pays + "/from-invoice-any", body: invoiceDoc("c1000000-0000-4000-8000-000000000012", payee(nil)), status: 401, badRequest: true},
		{name: "from-invoice-any without scope", method: "POST", path: pays + "/from-invoice-any", auth: "invoice", body: invoiceDoc("c1000000-0000-4000-8000-000000000012", payee(nil)), status: 403},
		{name: "from-invoice-any without isPaidByCredit", method: "POST", path: pays + "/from-invoice-any", auth: "invoice any",
			body: invoiceDoc("c1000000-0000-4000-8000-000000000013", payee(map[string]any{"isPaidByCredit": nil})), status: 400, cause: "VALIDATION_FAULT", badRequest: true},
		{name: "from-invoice-any without payeeInn", method: "POST", path: pays + "/from-invoice-any", auth: "invoice any",
			body: invoiceDoc("c1000000-0000-4000-8000-000000000016", payee(map[string]any{"payeeInn": nil})), status: 400, cause: "VALIDATION_FAULT", badRequest: true},
		{name: "from-invoice-any isPaidByCredit null", method: "POST", path: pays + "/from-invoice-any", auth: "invoice any",
			body: invoiceDoc("c1000000-0000-4000-8000-000000000f30", payee(map[string]any{"isPaidByCredit": jsonNull})), status: 400, cause: "VALIDATION_FAULT", badRequest: true},
		{name: "from-invoice-any priority null", method: "POST", path: pays + "/from-invoice-any", auth: "invoice any",
			body: invoiceDoc("c1000000-0000-4000-8000-000000000f31", payee(map[string]any{"priority": jsonNull, "operationCode": jsonNull})), status: 201},
		{name: "from-invoice-any over the rate limit", server: "limited", method: "POST", path: pays + "/from-invoice-any", auth: "limited invoice any",
			body: invoiceDoc("c1000000-0000-4000-8000-000000000014", payee(nil)), status: 429, warm: true},
		{name: "from-invoice-any in maintenance", server: "maint", method: "POST", path: pays + "/from-invoice-any", auth: "maint invoice any",
			body: invoiceDoc("c1000000-0000-4000-8000-000000000014", payee(nil)), status: 503},
		{name: "from-invoice-any over the body limit", method: "POST", path: pays + "/from-invoice-any", auth: "invoice any",
			body: overLimit(invoiceDoc("c1000000-0000-4000-8000-000000000015", payee(nil))), status: 413, cause: "VALIDATION_FAULT"},
		{name: "from-invoice-budget", method: "POST", path: pays + "/from-invoice-budget", auth: "invoice budget", body: invoiceDoc("c1000000-0000-4000-8000-000000000021", budget), status: 201},
		{name: "from-invoice-budget as JWS", method: "POST", path: pays + "/from-invoice-budget", auth: "invoice budget", ctype: "application/jose",
			body: sandboxJWS(invoiceDoc("c1000000-0000-4000-8000-0000000000e2", budget)), status: 201},
		{name: "from-invoice-budget without token", method: "POST", path: pays + "/from-invoice-budget", body: invoiceDoc("c1000000-0000-4000-8000-000000000022", budget), status: 401, badRequest: true},
		{name: "from-invoice-budget without scope", method: "POST", path: pays + "/from-invoice-budget", auth: "invoice any", body: invoiceDoc("c1000000-0000-4000-8000-000000000022", budget), status: 403},
		{name: "from-invoice-budget amount zero", method: "POST", path: pays + "/from-invoice-budget", auth: "invoice budget",
			body: invoiceDoc("c1000000-0000-4000-8000-000000000023", map[string]any{"amount": 0}), status: 400, cause: "VALIDATION_FAULT", badRequest: true},
		{name: "from-invoice-budget without departmentalInfo", method: "POST", path: pays + "/from-invoice-budget", auth: "invoice budget",
			body: invoiceDoc("c1000000-0000-4000-8000-000000000026", payee(map[string]any{"departmentalInfo": nil})), status: 400, cause: "VALIDATION_FAULT", badRequest: true},
		{name: "from-invoice-budget over the rate limit", server: "limited", method: "POST", path: pays + "/from-invoice-budget", auth: "limited invoice budget",
			body: invoiceDoc("c1000000-0000-4000-8000-000000000024", budget), status: 429, warm: true},
		{name: "from-invoice-budget in maintenance", server: "maint", method: "POST", path: pays + "/from-invoice-budget", auth: "maint invoice budget",
			body: invoiceDoc("c1000000-0000-4000-8000-000000000024", budget), status: 503},

		{name: "from-invoice-budget over the body limit", method: "POST", path: pays + "/from-invoice-budget", auth: "invoice budget",
			body: overLimit(invoiceDoc("c1000000-0000-4000-8000-000000000025", budget)), status: 413, cause: "VALIDATION_FAULT"},
		{name: "qr confirmation", method: "POST", path: pays + "/qr-confirmation", auth: "pay", body: `{"externalDocIds":["` + banking.QRSandboxOK + `"]}`, status: 201},
		{name: "qr confirmation not OTP", method: "POST", path: pays + "/qr-confirmation", auth: "pay", body: `{"externalDocIds":["` + banking.QRSandboxNotOTP + `"]}`,
			status: 400, cause: "WORKFLOW_FAULT"},
		{name: "qr confirmation unknown", method: "POST", path: pays + "/qr-confirmation", auth: "pay", body: `{"externalDocIds":["` + unknown + `"]}`,
			status: 404, cause: "DATA_NOT_FOUND_EXCEPTION"},
		{name: "qr confirmation empty", method: "POST", path: pays + "/qr-confirmation", auth: "pay", body: `{"externalDocIds":[]}`, status: 400, badRequest: true},
		{name: "qr confirmation six", method: "POST", path: pays + "/qr-confirmation", auth: "pay",
			body: `{"externalDocIds":["` + strings.Repeat(unknown+`","`, 5) + unknown + `"]}`, status: 400, cause: "VALIDATION_FAULT", badRequest: true},
		{name: "qr confirmation without token", method: "POST", path: pays + "/qr-confirmation", body: `{"externalDocIds":["` + banking.QRSandboxOK + `"]}`, status: 401, badRequest: true},
		{name: "qr confirmation without scope", method: "POST", path: pays + "/qr-confirmation", auth: "invoice", body: `{"externalDocIds":["` + banking.QRSandboxOK + `"]}`, status: 403},
		{name: "qr confirmation over the rate limit", server: "limited", method: "POST", path: pays + "/qr-confirmation", auth: "limited pay",
			body: `{"externalDocIds":["` + banking.QRSandboxOK + `"]}`, status: 429, warm: true},
		{name: "qr confirmation in maintenance", server: "maint", method: "POST", path: pays + "/qr-confirmation", auth: "maint pay",
			body: `{"externalDocIds":["` + banking.QRSandboxOK + `"]}`, status: 503},

		{name: "qr confirmation over the body limit", method: "POST", path: pays + "/qr-confirmation", auth: "pay",
			body: overLimit(`{"externalDocIds":["` + banking.QRSandboxOK + `"]}`), status: 413, cause: "VALIDATION_FAULT"},
		{name: "get", method: "GET", path: pays + "/" + p2, auth: "pay", status: 200},
		{name: "get draft", method: "GET", path: pays + "/" + p1, auth: "pay bare", status: 200},
		{name: "get CHECKERROR", method: "GET", path: pays + "/" + p4, auth: "pay", status: 200},
		{name: "get invoice draft", method: "GET", path: pays + "/c1000000-0000-4000-8000-000000000001", auth: "pay", status: 200},
		{name: "get unknown", method: "GET", path: pays + "/" + unknown, auth: "pay", status: 404, cause: "DATA_NOT_FOUND_EXCEPTION"},
		{name: "get without token", method: "GET", path: pays + "/" + p2, status: 401, badRequest: true},
		{name: "get invoice scope", method: "GET", path: pays + "/" + p2, auth: "invoice", status: 403, cause: "ACTION_ACCESS_EXCEPTION"},
		{name: "get over the rate limit", server: "limited", method: "GET", path: pays + "/" + unknown, auth: "limited pay", status: 429, warm: true},
		{name: "get in maintenance", server: "maint", method: "GET", path: pays + "/" + unknown, auth: "maint pay", status: 503},

		{name: "state", method: "GET", path: pays + "/" + p2 + "/state", auth: "pay", status: 200},
		{name: "state draft", method: "GET", path: pays + "/" + p1 + "/state", auth: "pay", status: 200},
		{name: "state invoice scope", method: "GET", path: pays + "/c1000000-0000-4000-8000-000000000001/state", auth: "invoice", status: 200},
		{name: "state unknown", method: "GET", path: pays + "/" + unknown + "/state", auth: "pay", status: 404, cause: "DATA_NOT_FOUND_EXCEPTION"},
		{name: "state without token", method: "GET", path: pays + "/" + p2 + "/state", status: 401, badRequest: true},
		{name: "state without scope", method: "GET", path: pays + "/" + p2 + "/state", auth: "cards", status: 403},
		{name: "state over the rate limit", server: "limited", method: "GET", path: pays + "/" + unknown + "/state", auth: "limited pay", status: 429, warm: true},
		{name: "state in maintenance", server: "maint", method: "GET", path: pays + "/" + unknown + "/state", auth: "maint pay", status: 503},

		{name: "history", method: "GET", path: pays + "/" + p1 + "/history", auth: "pay", status: 200},
		{name: "history unknown", method: "GET", path: pays + "/" + unknown + "/history", auth: "pay", status: 404, cause: "DATA_NOT_FOUND_EXCEPTION"},
		{name: "history without token", method: "GET", path: pays + "/" + p1 + "/history", status: 401, badRequest: true},
		{name: "history without scope", method: "GET", path: pays + "/" + p1 + "/history", auth: "cards", status: 403},
		{name: "history over the rate limit", server: "limited", method: "GET", path: pays + "/" + unknown + "/history", auth: "limited pay", status: 429, warm: true},
		{name: "history in maintenance", server: "maint", method: "GET", path: pays + "/" + unknown + "/history", auth: "maint pay", status: 503},
		{name: "digest", method: "GET", path: pays + "/" + p1 + "/digest", auth: "pay", status: 200},
		{name: "digest unknown", method: "GET", path: pays + "/" + unknown + "/digest", auth: "pay", status: 404, cause: "DATA_NOT_FOUND_EXCEPTION"},
		{name: "digest of an invoice draft with its payer", method: "GET", path: pays + "/c1000000-0000-4000-8000-000000000001/digest?payerAccount=" + banking.SandboxAccount, auth: "pay", status: 200},
		{name: "digest of an invoice draft with an unknown payer", method: "GET", path: pays + "/c1000000-0000-4000-8000-000000000001/digest?payerAccount=40702810200000012345", auth: "pay", status: 400, cause: "WORKFLOW_FAULT"},
		{name: "digest without token", method: "GET", path: pays + "/" + p1 + "/digest", status: 401, badRequest: true},
		{name: "digest without scope", method: "GET", path: pays + "/" + p1 + "/digest", auth: "cards", status: 403},
		{name: "digest over the rate limit", server: "limited", method: "GET", path: pays + "/" + unknown + "/digest", auth: "limited pay", status: 429, warm: true},
		{name: "digest in maintenance", server: "maint", method: "GET", path: pays + "/" + unknown + "/digest", auth: "maint pay", status: 503},

		{name: "requisites QR", method: "GET", path: pays + "/" + p1 + "/requisites-qr", auth: "pay", status: 200},
		{name: "requisites QR as PNG", method: "GET", path: pays + "/" + p1 + "/requisites-qr", auth: "pay", accept: "image/png", status: 200},
		{name: "requisites QR as PNG by query", method: "GET", path: pays + "/" + p1 + "/requisites-qr?format=png", auth: "pay", status: 200},
		{name: "requisites QR unknown format", method: "GET", path: pays + "/" + p1 + "/requisites-qr?format=gif", auth: "pay", status: 400, cause: "VALIDATION_FAULT", badRequest: true},
		{name: "requisites QR unknown", method: "GET", path: pays + "/" + unknown + "/requisites-qr", auth: "pay", status: 404, cause: "DATA_NOT_FOUND_EXCEPTION"},
		{name: "requisites QR without token", method: "GET", path: pays + "/" + p1 + "/requisites-qr", status: 401, badRequest: true},
		{name: "requisites QR without scope", method: "GET", path: pays + "/" + p1 + "/requisites-qr", auth: "cards", status: 403},
		{name: "requisites QR over the rate limit", server: "limited", method: "GET", path: pays + "/" + unknown + "/requisites-qr", auth: "limited pay", status: 429, warm: true},
		{name: "requisites QR in maintenance", server: "maint", method: "GET", path: pays + "/" + unknown + "/requisites-qr", auth: "maint pay", status: 503},

		{name: "sign second", method: "POST", path: pays + "/" + p3 + "/sign", auth: "pay", body: sign(banking.SandboxCertSecond), status: 200},
		{name: "sign draft first", method: "POST", path: pays + "/" + p1 + "/sign", auth: "pay", body: sign(banking.SandboxCertFirst), status: 200},
		{name: "sign signed document", method: "POST", path: pays + "/" + p2 + "/sign", auth: "pay", body: sign(banking.SandboxCertSole), status: 400, cause: "WORKFLOW_FAULT"},
		{name: "sign without signatures", method: "POST", path: pays + "/" + p1 + "/sign", auth: "pay", body: `{"digestSignatures":[]}`, status: 400, badRequest: true},
		{name: "sign without certificate", method: "POST", path: pays + "/" + p1 + "/sign", auth: "pay", body: `{"digestSignatures":[{"base64Encoded":"MIIB"}]}`,
			status: 400, cause: "VALIDATION_FAULT", badRequest: true},
		{name: "sign unknown", method: "POST", path: pays + "/" + unknown + "/sign", auth: "pay", body: sign(banking.SandboxCertSole), status: 404, cause: "DATA_NOT_FOUND_EXCEPTION"},
		{name: "sign without token", method: "POST", path: pays + "/" + p1 + "/sign", body: sign(banking.SandboxCertSecond), status: 401, badRequest: true},
		{name: "sign without scope", method: "POST", path: pays + "/" + p1 + "/sign", auth: "invoice", body: sign(banking.SandboxCertSecond), status: 403},
		{name: "sign over the rate limit", server: "limited", method: "POST", path: pays + "/" + unknown + "/sign", auth: "limited pay", body: sign(banking.SandboxCertSole), status: 429, warm: true},
		{name: "sign in maintenance", server: "maint", method: "POST", path: pays + "/" + unknown + "/sign", auth: "maint pay", body: sign(banking.SandboxCertSole), status: 503},
		{name: "sign over the body limit", method: "POST", path: pays + "/" + p1 + "/sign", auth: "pay", body: overLimit(sign(banking.SandboxCertSecond)),
			status: 413, cause: "VALIDATION_FAULT"},
	}
}

// TestBankingContract drives every operation of api/banking.yaml through
// live sandbox servers and validates each request and each response
// (status, headers, body) against the contract. Unmodified partner
// clients, some generated from the contract, talk to this service, so
// wire and contract must agree.
func TestBankingContract(t *testing.T) {
	contract := loadContract(t, "banking")
	f := newBankFixture(t)
	seen := map[string]map[string]bool{}
	t.Run("payments", func(t *testing.T) { f.runBankCases(t, contract, seen, paymentCases()) })
	t.Run("webhooks", func(t *testing.T) { f.runBankCases(t, contract, seen, webhookCases()) })
	t.Run("identity", func(t *testing.T) { f.runBankCases(t, contract, seen, identityCases(t, f)) })
	t.Run("cards", func(t *testing.T) { f.runBankCases(t, contract, seen, cardCases(t)) })
	t.Run("cert requests", func(t *testing.T) { f.runBankCases(t, contract, seen, certRequestCases()) })       // banking_contract_certreq_test.go
	t.Run("sandbox payments", func(t *testing.T) { f.runBankCases(t, contract, seen, sandboxPaymentCases()) }) // banking_contract_sandbox_test.go
	t.Run("store failures", func(t *testing.T) { f.runBankCases(t, contract, seen, failureCases()) })
	outage := f.outageCases()
	if _, down := f.base["down"]; down {
		t.Run("database down", func(t *testing.T) { f.runBankCases(t, contract, seen, outage) })
	}
	// Every documented response must be provoked, or be one a sandbox
	// server cannot give, named here with the reason.
	unprovoked := map[string]string{
		"GET /healthz 503":      "the store is in-process SQLite",
		"GET /healthz 500":      "only a panic; TestBankingContractPlatformFailures provokes it in-process",
		"GET /metrics 500":      "a failing collector or a panic; TestBankingContractPlatformFailures provokes both in-process",
		"GET /openapi.yaml 500": "only a panic; TestBankingContractPlatformFailures provokes it in-process",
	}
	_, down := f.base["down"]
	unprovokedOutage(unprovoked, seen, contract.outageOps(outage), down)
	contract.checkCoverage(t, seen, unprovoked)
}
