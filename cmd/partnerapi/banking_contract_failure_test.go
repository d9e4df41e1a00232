package main

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"partnerapi/internal/banking"
)

// brokenTables are the banking tables the "broken" server loses after its
// tokens are issued: every operation's own data, but not the tokens, users,
// organisations and apps that authentication reads, so each request gets
// past its auth and scope checks and fails in the operation itself.
var brokenTables = []string{
	"banking_payments", "banking_payment_history", "banking_payment_numbers", "banking_accounts", "banking_certs",
	"banking_partner_webhooks", "banking_payment_webhook_log",
	"banking_cards", "banking_card_offer_accounts", "banking_card_limits", "banking_card_clock",
	"banking_cert_requests",
}

// breakBankingStore renames brokenTables in the SQLite database of the
// server on dataDir, behind its back: its statements then fail with "no
// such table", the unexpected store error every operation must answer 500
// UNKNOWN_EXCEPTION, in the banking envelope and the contract.
func breakBankingStore(t *testing.T, dataDir string) {
	t.Helper()
	renameTables(t, dataDir, brokenTables...)
}

// renameTables renames tables (to NAME_gone) in the SQLite database of the
// server running on dataDir, which sees the change at its next statement.
func renameTables(t *testing.T, dataDir string, tables ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dataDir, "partnerapi.db")+"?_pragma=busy_timeout%285000%29")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, table := range tables {
		if _, err := db.ExecContext(context.Background(), "ALTER TABLE "+table+" RENAME TO "+table+"_gone"); err != nil {
			t.Fatalf("rename %s: %v", table, err)
		}
	}
}

// failureCases has one row per /fintech/api operation on the broken
// server: a request that would succeed on a whole store, answered 500.
func failureCases() []bankCase {
	rows := operationRows()
	for i := range rows {
		rows[i].server, rows[i].auth = "broken", "broken "+rows[i].auth
		rows[i].status, rows[i].cause = 500, "UNKNOWN_EXCEPTION"
	}
	return rows
}

// operationRows has one request per /fintech/api operation that would
// succeed on a whole store of a sandbox server, with the fixture's
// Authorization key (without the server's prefix), but no server and no
// expected answer: failureCases and outageCases fill them in.
func operationRows() []bankCase {
	const (
		pays  = "/fintech/api/v1/payments"
		cards = "/fintech/api/v1/business-cards"
		doc   = "c2000000-0000-4000-8000-000000000001"
	)
	payee := map[string]any{"payeeBankBic": banking.SandboxBIC, "payeeBankCorrAccount": banking.SandboxCorrAccount, "payeeInn": banking.SandboxOrgINN,
		"payeeKpp": banking.SandboxOrgKPP, "payeeName": "ООО Песочница", "isPaidByCredit": false}
	budget := map[string]any{"payeeName": "Казначейство России (ФНС России)", "payeeInn": banking.ENPPayeeINN, "payeeKpp": "770701001",
		"payeeAccount": banking.ENPPayeeAccount, "payeeBankBic": banking.ENPPayeeBIC, "payeeBankCorrAccount": banking.ENPPayeeCorrAcc,
		"departmentalInfo": map[string]any{"drawerStatus101": "01", "kbk": banking.ENPKBK, "oktmo": "0",
			"reasonCode106": "0", "taxPeriod107": "0", "docNumber108": "0", "docDate109": "0", "paymentKind110": nil, "uip": "0"}}
	sign := `{"digestSignatures":[{"base64Encoded":"MIIB","certificateUuid":"` + banking.SandboxCertSole + `"}]}`
	return append(certRequestOperationRows(), []bankCase{
		{name: "client-info", method: "GET", path: "/fintech/api/v1/client-info", auth: "accounts"},
		{name: "crypto", method: "GET", path: "/fintech/api/v1/crypto", auth: "crypto"},
		{name: "crypto eio", method: "GET", path: "/fintech/api/v1/crypto/eio", auth: "eio"},
		{name: "create", method: "POST", path: pays, auth: "pay", body: bankDoc(doc, nil)},
		{name: "from-invoice", method: "POST", path: pays + "/from-invoice", auth: "invoice", body: invoiceDoc(doc, nil)},
		{name: "from-invoice-any", method: "POST", path: pays + "/from-invoice-any", auth: "invoice any", body: invoiceDoc(doc, payee)},
		{name: "from-invoice-budget", method: "POST", path: pays + "/from-invoice-budget", auth: "invoice budget", body: invoiceDoc(doc, budget)},
		{name: "qr confirmation", method: "POST", path: pays + "/qr-confirmation", auth: "pay", body: `{"externalDocIds":["` + doc + `"]}`},
		{name: "get", method: "GET", path: pays + "/" + doc, auth: "pay"},
		{name: "state", method: "GET", path: pays + "/" + doc + "/state", auth: "pay"},
		{name: "digest", method: "GET", path: pays + "/" + doc + "/digest", auth: "pay"},
		{name: "history", method: "GET", path: pays + "/" + doc + "/history", auth: "pay"},
		{name: "requisites QR", method: "GET", path: pays + "/" + doc + "/requisites-qr", auth: "pay"},
		{name: "sign", method: "POST", path: pays + "/" + doc + "/sign", auth: "pay", body: sign},
		{name: "webhook set", method: "PUT", path: "/fintech/api/v1/webhook", auth: "pay", body: `{"url":"http://127.0.0.1:9/hook"}`},
		{name: "webhook get", method: "GET", path: "/fintech/api/v1/webhook", auth: "pay"},
		{name: "webhook delete", method: "DELETE", path: "/fintech/api/v1/webhook", auth: "pay"},
		{name: "webhook deliveries", method: "GET", path: "/fintech/api/v1/webhook/deliveries", auth: "pay"},
		{name: "cards", method: "GET", path: cards, auth: "cards"},
		{name: "cards by POST", method: "POST", path: cards, auth: "cards"},
		{name: "limit", method: "POST", path: cards + "/limits", auth: "cards", body: cardLimit("sbc-00001", doc, 5, banking.SandboxCertSole)},
		{name: "limit state", method: "GET", path: cards + "/limits/" + doc + "/state", auth: "cards"},
		{name: "limit sign", method: "POST", path: cards + "/limits/" + doc + "/sign", auth: "cards", body: sign},
		{name: "clock", method: "POST", path: "/fintech/api/sandbox/clock", auth: "cards", body: `{"advance":"1h"}`},
		{name: "sandbox delete", method: "POST", path: "/fintech/api/sandbox/payments/" + doc + "/delete", auth: "pay", body: `{}`},
		{name: "sandbox edit", method: "POST", path: "/fintech/api/sandbox/payments/" + doc + "/edit", auth: "pay", body: bankDoc(doc, nil)},
	}...) // certRequestOperationRows: banking_contract_certreq_test.go
}
