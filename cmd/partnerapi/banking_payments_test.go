package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/banking/bankapi"
)

// bankingToken issues an access token for the sandbox organisation through
// the provisioning CLI against the server's store.
func bankingToken(t *testing.T, ts *testServer, scope string) string {
	t.Helper()
	var out bytes.Buffer
	if err := runBanking(context.Background(), []string{"token", "--scope", scope, "--data-dir", ts.dataDir},
		func(string) string { return "" }, stdio{in: strings.NewReader(""), out: &out, err: io.Discard}); err != nil {
		t.Fatal(err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(out.Bytes(), &tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("token: %v %s", err, out.String())
	}
	return tok.AccessToken
}

// bankRequest sends body (JSON-encoded; nil: none) to url with the access
// token as the Authorization header value, and returns the status and the
// answer's bytes.
func bankRequest(t *testing.T, method, url, authorization string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader = http.NoBody
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, url, rd)
	req.Header.Set("Authorization", authorization)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// bankRequestJSON is bankRequest with the answer decoded as a JSON object (nil
// when it is not one).
func bankRequestJSON(t *testing.T, method, url, authorization string, body any) (int, map[string]any) {
	t.Helper()
	code, out := bankRequest(t, method, url, authorization, body)
	var m map[string]any
	_ = json.Unmarshal(out, &m)
	return code, m
}

// The payment flow end to end through the real Authenticator, the sandbox
// SignatureVerifier and the seeded sandbox organisation and accounts.
func TestBankingPaymentsEndToEnd(t *testing.T) {
	ts := startServer(t)
	base := ts.urls["banking"] + "/fintech/api/v1/payments"
	tok := bankingToken(t, ts, "PAY_DOC_RU")
	call := func(method, url, body string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}
	doc := func(id string, certs ...string) string {
		m := map[string]any{
			"externalId": id, "date": todayUTC(), "amount": json.Number("10.01"), "operationCode": "01", "priority": "5",
			"purpose": "Оплата, без НДС", "payerName": "ООО Песочница", "payerInn": banking.SandboxOrgINN,
			"payerAccount": banking.SandboxAccount, "payerBankBic": banking.SandboxBIC, "payerBankCorrAccount": banking.SandboxCorrAccount,
			"payeeName": "АО Лютик", "payeeInn": "7830002293", "payeeAccount": "40602810700000000025",
			"payeeBankBic": "049805746", "payeeBankCorrAccount": "30101810800000000746",
		}
		var sigs []any
		for _, c := range certs {
			s := map[string]any{"base64Encoded": "MIIB", "certificateUuid": c}
			if c == banking.SandboxCertQualified {
				s["signType"] = "UKEP_UL"
			}
			sigs = append(sigs, s)
		}
		if sigs != nil {
			m["digestSignatures"] = sigs
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	for _, tc := range []struct {
		id     string
		certs  []string
		status int
		want   string
	}{
		{"a0000000-0000-4000-8000-000000000001", nil, 201, "CREATED"},
		{"a0000000-0000-4000-8000-000000000002", []string{banking.SandboxCertSole}, 201, "IMPLEMENTED"},
		{"a0000000-0000-4000-8000-000000000003", []string{banking.SandboxCertSecond, banking.SandboxCertFirst}, 201, "IMPLEMENTED"},
		{"a0000000-0000-4000-8000-000000000004", []string{banking.SandboxCertFirst}, 201, "PARTSIGNED"},
		{"a0000000-0000-4000-8000-000000000005", []string{banking.SandboxCertQualified}, 201, "IMPLEMENTED"},
		{"a0000000-0000-4000-8000-000000000006", []string{"11111111-1111-4111-8111-111111111111"}, 400, "WORKFLOW_FAULT"},
		{"a0000000-0000-4000-8000-000000000007", []string{banking.SandboxCertSole, banking.SandboxCertFirst}, 400, "WORKFLOW_FAULT"},
	} {
		st, m := call("POST", base, doc(tc.id, tc.certs...))
		got, _ := m["bankStatus"].(string)
		if st >= 400 {
			got, _ = m["cause"].(string)
		}
		if st != tc.status || got != tc.want {
			t.Fatalf("%s %v: %d %v, want %d %s", tc.id, tc.certs, st, m, tc.status, tc.want)
		}
	}
	// Sign the partly signed document with the second signature.
	st, m := call("POST", base+"/a0000000-0000-4000-8000-000000000004/sign",
		`{"digestSignatures":[{"base64Encoded":"MIIB","certificateUuid":"`+banking.SandboxCertSecond+`"}]}`)
	if st != 200 || m["bankStatus"] != "IMPLEMENTED" {
		t.Fatalf("sign later: %d %v", st, m)
	}
	st, m = call("GET", base+"/a0000000-0000-4000-8000-000000000004/state", "")
	if st != 200 || m["bankStatus"] != "IMPLEMENTED" {
		t.Fatalf("state: %d %v", st, m)
	}
	// Duplicate externalId.
	if st, m := call("POST", base, doc("a0000000-0000-4000-8000-000000000001")); st != 400 || m["cause"] != "WORKFLOW_FAULT" {
		t.Fatalf("duplicate: %d %v", st, m)
	}
}

// The final status of a fully signed payment reaches the partner's webhook
// from the outbox the real server drains, signed with the shared secret.
func TestBankingPaymentsWebhookEndToEnd(t *testing.T) {
	got := make(chan map[string]string, 4)
	partner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Header.Get("X-Signature") != bankapi.WebhookSignature([]byte("hook-secret"), body) {
			t.Errorf("bad webhook signature")
		}
		var m map[string]string
		_ = json.Unmarshal(body, &m)
		got <- m
		w.WriteHeader(http.StatusNoContent)
	}))
	defer partner.Close()
	// The receiver is an httptest server on 127.0.0.1: private targets
	// have to be allowed explicitly.
	ts := startServer(t, "--banking-webhook-url", partner.URL, "--banking-webhook-secret", "hook-secret", "--banking-webhook-interval", "50ms",
		"--banking-webhook-allow-private")
	tok := bankingToken(t, ts, "PAY_DOC_RU")
	id := "b0000000-0000-4000-8000-000000000001"
	body := `{"externalId":"` + id + `","date":"` + time.Now().UTC().Format(time.DateOnly) + `","amount":1,"operationCode":"01","priority":"5",` +
		`"purpose":"Оплата","payerName":"ООО","payerInn":"` + banking.SandboxOrgINN + `","payerAccount":"` + banking.SandboxAccount +
		`","payerBankBic":"` + banking.SandboxBIC + `","payerBankCorrAccount":"` + banking.SandboxCorrAccount +
		`","payeeName":"АО","payeeBankBic":"049805746","payeeAccount":"40602810700000000025",` +
		`"digestSignatures":[{"base64Encoded":"MIIB","certificateUuid":"` + banking.SandboxCertSole + `"}]}`
	req, _ := http.NewRequest("POST", ts.urls["banking"]+"/fintech/api/v1/payments", strings.NewReader(body))
	req.Header.Set("Authorization", tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Fatalf("create: %d", resp.StatusCode)
	}
	select {
	case m := <-got:
		if m["externalId"] != id || m["bankStatus"] != "IMPLEMENTED" || m["eventTime"] == "" {
			t.Fatalf("webhook %v", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no webhook in 10s")
	}
	select {
	case m := <-got:
		t.Fatalf("delivered twice: %v", m)
	case <-time.After(200 * time.Millisecond):
	}
}

// todayUTC is a payment date the server takes whenever the tests run: a
// payment order is valid for ten days from its date (reference §4), so a
// fixed date in a test expired ten days after it was written (these tests
// failed on 2026-11-30 with "2026-11-20"), and UTC's date is never after
// the bank's own (Moscow's), so it is never a date in the future.
func todayUTC() string { return time.Now().UTC().Format(time.DateOnly) }
