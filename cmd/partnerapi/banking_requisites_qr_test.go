package main

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"partnerapi/internal/banking"
)

// An invoice draft names only the payee's account, its own organisation's
// (reference §4.1); its requisites QR (§14) must carry the payee's name,
// INN, KPP and bank from the identity store the real server runs on, and
// the draft stays invisible to another organisation's token.
func TestBankingInvoiceDraftRequisitesQR(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, "--only", "banking", "--data-dir", dir, "--banking-payment-rate", "0")
	cli := func(args ...string) map[string]any {
		return bankingCLI(t, "", append(args, "--data-dir", dir)...)
	}
	const name, inn, kpp = "ООО «Ромашка»", "7830002293", "783001001"
	org := cli("org", "create", "--name", name, "--inn", inn, "--kpp", kpp)["id"].(string)
	acc := validAccountFor(t, "40702810038833411799", banking.SandboxBIC)
	cli("account", "add", "--org", org, "--number", acc, "--bic", banking.SandboxBIC, "--corr", banking.SandboxCorrAccount)
	user := cli("user", "create", "--org", org, "--login", "romashka")["id"].(string)
	tok := "Bearer " + cli("token", "--scope", "PAY_DOC_RU_INVOICE", "--org", org, "--user", user)["access_token"].(string)
	other := "Bearer " + cli("token", "--scope", "PAY_DOC_RU PAY_DOC_RU_INVOICE")["access_token"].(string)

	base := ts.urls["banking"] + "/fintech/api/v1/payments"
	const id = "5b0c3f7e-2d41-4c9a-9e57-0b1d2c3e4f51"
	draft := map[string]any{"externalId": id, "amount": json.Number("150.50"), "date": time.Now().UTC().Format(time.DateOnly),
		"purpose": "Оплата по счёту 7, без НДС", "payeeAccount": acc, "operationCode": "01", "priority": "5"}
	if code, body := bankRequest(t, http.MethodPost, base+"/from-invoice", tok, draft); code != http.StatusCreated {
		t.Fatalf("from-invoice: %d %s", code, body)
	}

	code, m := bankRequestJSON(t, http.MethodGet, base+"/"+id+"/requisites-qr", tok, nil)
	payload, _ := m["payload"].(string)
	if code != http.StatusOK || payload == "" {
		t.Fatalf("requisites QR: %d %v", code, m)
	}
	p, err := banking.ParseST00012([]byte(payload))
	if err != nil {
		t.Fatalf("the payload does not parse: %v\n%s", err, payload)
	}
	for key, want := range map[string]string{
		"Name": name, "PersonalAcc": acc, "PayeeINN": inn, "KPP": kpp,
		"BIC": banking.SandboxBIC, "CorrespAcc": banking.SandboxCorrAccount,
		"Sum": "15050", "Purpose": "Оплата по счёту 7, без НДС",
	} {
		if got, ok := p.Get(key); !ok || got != want {
			t.Errorf("%s = %q (present %v), want %q\n%s", key, got, ok, want, payload)
		}
	}

	// The sandbox organisation's token, with every scope the QR accepts,
	// does not find another organisation's draft.
	if code, m := bankRequestJSON(t, http.MethodGet, base+"/"+id+"/requisites-qr", other, nil); code != http.StatusNotFound || m["cause"] != "DATA_NOT_FOUND_EXCEPTION" {
		t.Fatalf("another organisation's token: %d %v", code, m)
	}
}
