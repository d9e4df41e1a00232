package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/storetest"
)

// The bank's edit of a CHECKERROR document, end to end against a running
// server: the partner creates a payment order that fails a logical control
// (operationCode 02 outside a budget payment); the CLI's first correction
// still fails (dated ten days ahead) and leaves it CHECKERROR with the new
// comment, the second passes and makes it CREATED with a new digest, and
// what may not be edited or is not there is refused. The partner then signs
// it with the sandbox certificate, and its webhook gets exactly one
// delivery, the IMPLEMENTED one: the edits send none.
func TestBankingPaymentEditEndToEnd(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { paymentEditEndToEnd(t) })
	t.Run("postgres", func(t *testing.T) { paymentEditEndToEnd(t, "--database-url", storetest.PostgresURL(t)) })
}

// paymentEditEndToEnd is TestBankingPaymentEditEndToEnd with the server's
// and the CLI's store flags db (none: the data directory's SQLite).
func paymentEditEndToEnd(t *testing.T, db ...string) {
	partnerURL, got := signedWebhookReceiver(t, "hook-secret")
	ts := startServer(t, append([]string{"--banking-webhook-url", partnerURL, "--banking-webhook-secret", "hook-secret",
		"--banking-webhook-interval", "50ms", "--banking-webhook-allow-private"}, db...)...)
	store := append([]string{"--data-dir", ts.dataDir}, db...)
	dir := t.TempDir()
	paymentEdit := func(id string, set map[string]any, args ...string) (map[string]any, error) {
		file := filepath.Join(dir, "doc.json")
		if err := os.WriteFile(file, []byte(bankDoc(id, set)), 0o600); err != nil {
			t.Fatal(err)
		}
		return bankingCLIJSON(t, append(append([]string{"payment", "edit", "--org", banking.SandboxOrgID, "--external-id", id, "--file", file}, args...), store...)...)
	}
	issued, err := bankingCLIJSON(t, append([]string{"token", "--scope", "PAY_DOC_RU"}, store...)...)
	if err != nil {
		t.Fatal(err)
	}
	tok := "Bearer " + issued["access_token"].(string)
	base := ts.urls["banking"] + "/fintech/api/v1/payments"
	const checked, draft = "e0000000-0000-4000-8000-000000000011", "e0000000-0000-4000-8000-000000000012"
	for id, set := range map[string]map[string]any{checked: {"operationCode": "02"}, draft: nil} {
		if code, m := bankRequestJSON(t, "POST", base, tok, json.RawMessage(bankDoc(id, set))); code != 201 {
			t.Fatalf("create %s: %d %v", id, code, m)
		}
	}
	digest := func() string {
		code, body := bankRequest(t, "GET", base+"/"+checked+"/digest", tok, nil)
		if code != 200 {
			t.Fatalf("digest: %d %s", code, body)
		}
		return string(body)
	}
	before := digest()

	future := banking.BankDate(time.Now(), nil).AddDate(0, 0, 10).Format(time.DateOnly)
	m, err := paymentEdit(checked, map[string]any{"date": future})
	if err != nil || m["externalId"] != checked || m["bankStatus"] != banking.StatusCheckError ||
		!strings.HasPrefix(m["bankComment"].(string), "Ошибка в поле date") || m["editedAt"] == "" {
		t.Fatalf("edit still failing: %v %v", m, err)
	}
	if code, s := bankRequestJSON(t, "GET", base+"/"+checked+"/state", tok, nil); code != 200 || s["bankStatus"] != banking.StatusCheckError || s["bankComment"] != m["bankComment"] {
		t.Fatalf("state after the first edit: %d %v, want %v", code, s, m)
	}
	if m, err = paymentEdit(checked, map[string]any{"purpose": "Оплата по договору 2, без НДС"}); err != nil || m["bankStatus"] != banking.StatusCreated || m["bankComment"] != nil {
		t.Fatalf("edit corrected: %v %v", m, err)
	}
	if after := digest(); after == before || !strings.Contains(after, "Оплата по договору 2") {
		t.Fatalf("digest after the edit %q, before %q: want the new content's", after, before)
	}

	for _, c := range []struct {
		id   string
		set  map[string]any
		args []string
		want []string
	}{
		{checked, nil, nil, []string{"нельзя изменить", banking.StatusCreated}},
		{draft, nil, nil, []string{"нельзя изменить", banking.StatusCreated}},
		{"e0000000-0000-4000-8000-0000000000ff", nil, nil, []string{"--external-id e0000000-0000-4000-8000-0000000000ff", "no payment document"}},
		{checked, map[string]any{"amount": "ten"}, nil, []string{"--file", "amount"}},
		{checked, nil, []string{"--banking-checksum-failures", "maybe"}, []string{"--banking-checksum-failures"}},
	} {
		_, err := paymentEdit(c.id, c.set, c.args...)
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("payment edit %s %v %v: %v, want an error saying %q", c.id, c.set, c.args, err, w)
			}
		}
	}
	if _, err := bankingCLIJSON(t, append([]string{"payment", "edit", "--org", banking.SandboxOrgID, "--external-id", checked}, store...)...); err == nil ||
		!strings.Contains(err.Error(), "--file") || !strings.Contains(err.Error(), "required") {
		t.Errorf("payment edit without --file: %v", err)
	}

	sign := map[string]any{"digestSignatures": []any{map[string]any{"base64Encoded": "MIIB", "certificateUuid": banking.SandboxCertSole}}}
	if code, s := bankRequestJSON(t, "POST", base+"/"+checked+"/sign", tok, sign); code != 200 || s["bankStatus"] != banking.StatusImplemented {
		t.Fatalf("sign the edited document: %d %v", code, s)
	}
	if m := nextWebhook(t, got); m["externalId"] != checked || m["bankStatus"] != banking.StatusImplemented {
		t.Fatalf("webhook %v, want the IMPLEMENTED one of %s", m, checked)
	}
	noMoreWebhooks(t, got)
}
