package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/banking/bankapi"
)

func webhookCLI(t *testing.T, dataDir string, args ...string) (map[string]any, error) {
	t.Helper()
	var out bytes.Buffer
	err := runBanking(context.Background(), append(append([]string{"webhook"}, args...), "--data-dir", dataDir),
		func(string) string { return "" }, stdio{in: strings.NewReader(""), out: &out, err: io.Discard})
	var m map[string]any
	if err == nil {
		if jerr := json.Unmarshal(out.Bytes(), &m); jerr != nil {
			t.Fatalf("webhook %v: %v %s", args, jerr, out.String())
		}
	}
	return m, err
}

// A partner's own webhook set by the CLI, without any deployment URL: the
// running server signs with the partner's secret, and the delivery log is
// readable by the CLI and by the partner's token.
func TestBankingPartnerWebhookEndToEnd(t *testing.T) {
	const secret = "sandbox-partner-secret-1"
	got := make(chan map[string]string, 4)
	partner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Header.Get("X-Signature") != bankapi.WebhookSignature([]byte(secret), body) {
			t.Errorf("not signed with the partner's secret")
		}
		var m map[string]string
		_ = json.Unmarshal(body, &m)
		got <- m
		w.WriteHeader(http.StatusNoContent)
	}))
	defer partner.Close()
	ts := startServer(t, "--banking-webhook-interval", "50ms", "--banking-webhook-allow-private")

	if _, err := webhookCLI(t, ts.dataDir, "set", "--client-id", "no-such-app", "--url", partner.URL); err == nil || !strings.Contains(err.Error(), "no-such-app") {
		t.Fatalf("unknown partner: %v", err)
	}
	if _, err := webhookCLI(t, ts.dataDir, "set", "--client-id", banking.SandboxClientID, "--url", "not a url"); err == nil || !strings.Contains(err.Error(), "url") {
		t.Fatalf("bad url: %v", err)
	}
	// The receiver is on 127.0.0.1: refused unless private targets are
	// allowed, and plain http is refused in production whatever the flag.
	if _, err := webhookCLI(t, ts.dataDir, "set", "--client-id", banking.SandboxClientID, "--url", partner.URL, "--secret", secret); err == nil ||
		!strings.Contains(err.Error(), "url") || !strings.Contains(err.Error(), "внутреннюю сеть") {
		t.Fatalf("private target without the flag: %v", err)
	}
	if _, err := webhookCLI(t, ts.dataDir, "set", "--client-id", banking.SandboxClientID, "--url", partner.URL, "--secret", secret,
		"--banking-webhook-allow-private", "--banking-contour", "production"); err == nil || !strings.Contains(err.Error(), "https") {
		t.Fatalf("http in production: %v", err)
	}
	set, err := webhookCLI(t, ts.dataDir, "set", "--client-id", banking.SandboxClientID, "--url", partner.URL, "--secret", secret, "--banking-webhook-allow-private")
	if err != nil || set["url"] != partner.URL || set["secretSet"] != true || set["secret"] != nil {
		t.Fatalf("set: %v %v", set, err)
	}
	show, err := webhookCLI(t, ts.dataDir, "show", "--client-id", banking.SandboxClientID)
	if err != nil || show["source"] != "partner" || show["url"] != partner.URL {
		t.Fatalf("show: %v %v", show, err)
	}
	key, err := os.Stat(filepath.Join(ts.dataDir, webhookKeyFile))
	if err != nil || key.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", key, err)
	}

	tok := bankingToken(t, ts, "PAY_DOC_RU")
	id := "c0000000-0000-4000-8000-000000000001"
	body := `{"externalId":"` + id + `","date":"` + time.Now().UTC().Format(time.DateOnly) + `","amount":1,"operationCode":"01","priority":"5",` +
		`"purpose":"Оплата","payerName":"ООО","payerInn":"` + banking.SandboxOrgINN + `","payerAccount":"` + banking.SandboxAccount +
		`","payerBankBic":"` + banking.SandboxBIC + `","payerBankCorrAccount":"` + banking.SandboxCorrAccount +
		`","payeeName":"АО","payeeBankBic":"049805746","payeeAccount":"40602810700000000025",` +
		`"digestSignatures":[{"base64Encoded":"MIIB","certificateUuid":"` + banking.SandboxCertSole + `"}]}`
	call := func(method, path, body string) (int, map[string]any) {
		req, _ := http.NewRequest(method, ts.urls["banking"]+path, strings.NewReader(body))
		req.Header.Set("Authorization", tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}
	if st, m := call("POST", "/fintech/api/v1/payments", body); st != 201 || m["bankStatus"] != "IMPLEMENTED" {
		t.Fatalf("create: %d %v", st, m)
	}
	select {
	case m := <-got:
		if m["externalId"] != id || m["bankStatus"] != "IMPLEMENTED" {
			t.Fatalf("webhook %v", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no webhook in 10s")
	}
	// The log says DELIVERED once the attempt is recorded.
	deadline := time.Now().Add(10 * time.Second)
	for {
		log, err := webhookCLI(t, ts.dataDir, "deliveries", "--client-id", banking.SandboxClientID)
		if err != nil {
			t.Fatal(err)
		}
		ds, _ := log["deliveries"].([]any)
		if len(ds) == 1 && ds[0].(map[string]any)["state"] == "DELIVERED" {
			// The CLI prints the format the attempt sent, json by default.
			if a, _ := ds[0].(map[string]any)["log"].([]any); len(a) != 1 || a[0].(map[string]any)["format"] != "json" {
				t.Fatalf("CLI delivery log %v", ds[0])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("deliveries %v", log)
		}
		time.Sleep(20 * time.Millisecond)
	}
	st, m := call("GET", "/fintech/api/v1/webhook/deliveries", "")
	if ds, _ := m["deliveries"].([]any); st != 200 || len(ds) != 1 || ds[0].(map[string]any)["externalId"] != id {
		t.Fatalf("API deliveries: %d %v", st, m)
	}
	if st, m := call("GET", "/fintech/api/v1/webhook", ""); st != 200 || m["source"] != "partner" || m["secret"] != nil {
		t.Fatalf("API setting: %d %v", st, m)
	}
	// `banking webhook delete` removes it, as DELETE /v1/webhook does, and
	// prints what the partner sees then: no setting of its own.
	if del, err := webhookCLI(t, ts.dataDir, "delete", "--client-id", banking.SandboxClientID); err != nil || del["source"] != "none" {
		t.Fatalf("webhook delete: %v %v", del, err)
	}
	if st, m := call("GET", "/fintech/api/v1/webhook", ""); st != 200 || m["source"] != "none" {
		t.Fatalf("API setting after the CLI's delete: %d %v", st, m)
	}
}
