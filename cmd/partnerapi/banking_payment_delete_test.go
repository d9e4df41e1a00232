package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/storetest"
)

// bankingCLIJSON runs `partnerapi banking ARGS...` and decodes what it
// prints.
func bankingCLIJSON(t *testing.T, args ...string) (map[string]any, error) {
	t.Helper()
	var out bytes.Buffer
	if err := runBanking(context.Background(), args, noEnv, stdio{in: strings.NewReader(""), out: &out, err: io.Discard}); err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatalf("banking %v printed %q: %v", args, out.String(), err)
	}
	return m, nil
}

// The bank's deletion of drafts, end to end against a running server: the
// partner creates a draft, a partly signed one, one its checks stored in
// CHECKERROR and a fully signed one; the CLI deletes the three drafts and
// refuses the signed one and what does not exist. The deleted documents
// answer DELETED through the API, with the comment when one was given,
// cannot be signed any more, and each reaches the configured webhook once,
// signed, as DELETED with the deletion's eventTime.
func TestBankingPaymentDeleteEndToEnd(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { paymentDeleteEndToEnd(t) })
	t.Run("postgres", func(t *testing.T) { paymentDeleteEndToEnd(t, "--database-url", storetest.PostgresURL(t)) })
}

// paymentDeleteEndToEnd is TestBankingPaymentDeleteEndToEnd with the
// server's and the CLI's store flags db (none: the data directory's SQLite).
func paymentDeleteEndToEnd(t *testing.T, db ...string) {
	partnerURL, got := signedWebhookReceiver(t, "hook-secret")
	ts := startServer(t, append([]string{"--banking-webhook-url", partnerURL, "--banking-webhook-secret", "hook-secret",
		"--banking-webhook-interval", "50ms", "--banking-webhook-allow-private"}, db...)...)
	store := append([]string{"--data-dir", ts.dataDir}, db...)
	paymentDelete := func(args ...string) (map[string]any, error) {
		return bankingCLIJSON(t, append(append([]string{"payment", "delete"}, args...), store...)...)
	}
	issued, err := bankingCLIJSON(t, append([]string{"token", "--scope", "PAY_DOC_RU"}, store...)...)
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := issued["access_token"].(string)
	base := ts.urls["banking"] + "/fintech/api/v1/payments"
	doc := func(id, operationCode string, certs ...string) map[string]any {
		m := map[string]any{
			"externalId": id, "date": time.Now().UTC().Format(time.DateOnly), "amount": 1, "operationCode": operationCode, "priority": "5",
			"purpose": "Оплата", "payerName": "ООО", "payerInn": banking.SandboxOrgINN, "payerAccount": banking.SandboxAccount,
			"payerBankBic": banking.SandboxBIC, "payerBankCorrAccount": banking.SandboxCorrAccount,
			"payeeName": "АО", "payeeBankBic": "049805746", "payeeAccount": "40602810700000000025",
		}
		var sigs []any
		for _, c := range certs {
			sigs = append(sigs, map[string]any{"base64Encoded": "MIIB", "certificateUuid": c})
		}
		if sigs != nil {
			m["digestSignatures"] = sigs
		}
		return m
	}
	const (
		draft   = "e0000000-0000-4000-8000-000000000001"
		half    = "e0000000-0000-4000-8000-000000000002"
		checked = "e0000000-0000-4000-8000-000000000003"
		signed  = "e0000000-0000-4000-8000-000000000004"
	)
	for _, c := range []struct {
		body map[string]any
		want string
	}{
		{doc(draft, "01"), banking.StatusCreated},
		{doc(half, "01", banking.SandboxCertFirst), banking.StatusPartSigned},
		// 02 outside a budget payment fails a logical control: CHECKERROR.
		{doc(checked, "02"), banking.StatusCheckError},
		{doc(signed, "01", banking.SandboxCertSole), banking.StatusImplemented},
	} {
		if code, m := bankRequestJSON(t, "POST", base, tok, c.body); code != 201 || m["bankStatus"] != c.want {
			t.Fatalf("create %s: %d %v, want 201 %s", c.body["externalId"], code, m, c.want)
		}
	}

	comments := map[string]any{draft: "Удалён пользователем банка", half: nil, checked: "Исправлен в новом документе"}
	eventTimes := map[string]string{}
	for id, comment := range comments {
		args := []string{"--org", banking.SandboxOrgID, "--external-id", id}
		if comment != nil {
			args = append(args, "--comment", comment.(string))
		}
		m, err := paymentDelete(args...)
		if err != nil || m["externalId"] != id || m["bankStatus"] != banking.StatusDeleted || m["bankComment"] != comment || m["eventTime"] == "" {
			t.Fatalf("delete %s: %v %v", id, m, err)
		}
		eventTimes[id] = m["eventTime"].(string)
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--org", banking.SandboxOrgID, "--external-id", signed}, []string{"нельзя удалить", banking.StatusImplemented}},
		{[]string{"--org", banking.SandboxOrgID, "--external-id", draft}, []string{"нельзя удалить", banking.StatusDeleted}},
		{[]string{"--org", banking.SandboxOrgID, "--external-id", "e0000000-0000-4000-8000-0000000000ff"}, []string{"--external-id e0000000-0000-4000-8000-0000000000ff", "no payment document"}},
		{[]string{"--org", "ghost", "--external-id", draft}, []string{"--org ghost: no such organisation"}},
		{[]string{"--external-id", draft}, []string{"--org and --external-id are required"}},
	} {
		_, err := paymentDelete(c.args...)
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("payment delete %v: %v, want an error saying %q", c.args, err, w)
			}
		}
	}

	for id, comment := range comments {
		if code, m := bankRequestJSON(t, "GET", base+"/"+id+"/state", tok, nil); code != 200 || m["bankStatus"] != banking.StatusDeleted || m["bankComment"] != comment {
			t.Fatalf("state of %s: %d %v, want DELETED with comment %v", id, code, m, comment)
		}
		if code, m := bankRequestJSON(t, "GET", base+"/"+id, tok, nil); code != 200 || m["bankStatus"] != banking.StatusDeleted {
			t.Fatalf("GET %s: %d %v, want DELETED", id, code, m)
		}
	}
	sign := map[string]any{"digestSignatures": []any{map[string]any{"base64Encoded": "MIIB", "certificateUuid": banking.SandboxCertSole}}}
	if code, m := bankRequestJSON(t, "POST", base+"/"+draft+"/sign", tok, sign); code != 400 || m["cause"] != "WORKFLOW_FAULT" ||
		!strings.Contains(m["message"].(string), banking.StatusDeleted) || m["referenceId"] == nil {
		t.Fatalf("sign a deleted draft: %d %v, want 400 WORKFLOW_FAULT naming DELETED", code, m)
	}
	if code, m := bankRequestJSON(t, "GET", base+"/"+signed+"/state", tok, nil); code != 200 || m["bankStatus"] != banking.StatusImplemented {
		t.Fatalf("the refused deletion changed %s: %d %v", signed, code, m)
	}

	// Four webhooks: the signed document's IMPLEMENTED and one DELETED of
	// each draft, with the comment and the time the CLI printed.
	want := map[string]string{draft: banking.StatusDeleted, half: banking.StatusDeleted, checked: banking.StatusDeleted, signed: banking.StatusImplemented}
	for len(want) > 0 {
		select {
		case m := <-got:
			id, _ := m["externalId"].(string)
			st, ok := want[id]
			if !ok || m["bankStatus"] != st {
				t.Fatalf("webhook %v: unexpected or sent twice (still expected %v)", m, want)
			}
			if st == banking.StatusDeleted && (m["bankComment"] != comments[id] || m["eventTime"] != eventTimes[id]) {
				t.Fatalf("DELETED webhook %v, want comment %v and eventTime %s", m, comments[id], eventTimes[id])
			}
			delete(want, id)
		case <-time.After(10 * time.Second):
			t.Fatalf("no webhook in 10s; still expected %v", want)
		}
	}
	noMoreWebhooks(t, got)
}
