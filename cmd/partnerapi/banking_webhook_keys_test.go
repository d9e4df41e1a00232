package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/banking/bankapi"
)

func newWebhookKey(t *testing.T) string {
	t.Helper()
	key := make([]byte, banking.WebhookKeySize)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(key)
}

// bankingEnvCLI runs `partnerapi banking ARGS` over dataDir with env as the
// environment and returns its output, JSON or not.
func bankingEnvCLI(t *testing.T, dataDir string, env map[string]string, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := runBanking(context.Background(), append(args, "--data-dir", dataDir), func(k string) string { return env[k] },
		stdio{in: strings.NewReader(""), out: &out, err: io.Discard})
	return out.String(), err
}

// sandboxPaymentBody is a fully signed sandbox payment order: the sandbox
// takes it straight to IMPLEMENTED, a final status with a webhook.
func sandboxPaymentBody(id string) string {
	return `{"externalId":"` + id + `","date":"` + time.Now().UTC().Format(time.DateOnly) + `","amount":1,"operationCode":"01","priority":"5",` +
		`"purpose":"Оплата","payerName":"ООО","payerInn":"` + banking.SandboxOrgINN + `","payerAccount":"` + banking.SandboxAccount +
		`","payerBankBic":"` + banking.SandboxBIC + `","payerBankCorrAccount":"` + banking.SandboxCorrAccount +
		`","payeeName":"АО","payeeBankBic":"049805746","payeeAccount":"40602810700000000025",` +
		`"digestSignatures":[{"base64Encoded":"MIIB","certificateUuid":"` + banking.SandboxCertSole + `"}]}`
}

// A key rotation end to end: two partners' secrets sealed under key A are
// re-sealed by `banking webhook reseal` with keys B,A; a server holding
// only B then signs each partner's delivery with that partner's secret,
// and each partner's log (CLI and API) shows only its own delivery. No
// output or error carries a key.
func TestBankingWebhookKeyRotation(t *testing.T) {
	secrets := map[string]string{banking.SandboxClientID: "sandbox-partner-secret-1", "second-partner": "second-partner-secret-02"}
	var mu sync.Mutex
	got := map[string][]string{} // client_id → externalIds received with a valid signature
	sinks := map[string]*httptest.Server{}
	for client, secret := range secrets {
		sinks[client] = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			if r.Header.Get("X-Signature") != bankapi.WebhookSignature([]byte(secret), body) {
				t.Errorf("%s: delivery not signed with its secret", client)
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			var m map[string]string
			_ = json.Unmarshal(body, &m)
			mu.Lock()
			got[client] = append(got[client], m["externalId"])
			mu.Unlock()
			w.WriteHeader(http.StatusNoContent)
		}))
		defer sinks[client].Close()
	}
	dir := t.TempDir()
	keyA, keyB := newWebhookKey(t), newWebhookKey(t)
	noEnv := map[string]string{}
	// The sandbox seed and a second partner application.
	if _, err := bankingEnvCLI(t, dir, noEnv, "app", "create", "--name", "Second", "--client-id", "second-partner", "--redirect-uri", "https://second.example/cb"); err != nil {
		t.Fatal(err)
	}
	// The flag's environment variable, as an operator would set it.
	allow := map[string]string{"PARTNERAPI_BANKING_WEBHOOK_ALLOW_PRIVATE": "true"}
	for client, secret := range secrets {
		if _, err := bankingEnvCLI(t, dir, allow, "webhook", "set", "--client-id", client, "--url", sinks[client].URL, "--secret", secret,
			"--banking-webhook-key", keyA); err != nil {
			t.Fatalf("set %s: %v", client, err)
		}
	}
	var outputs []string
	reseal := func(keys string) (map[string]any, error) {
		out, err := bankingEnvCLI(t, dir, noEnv, "webhook", "reseal", "--banking-webhook-key", keys)
		outputs = append(outputs, out)
		if err != nil {
			outputs = append(outputs, err.Error())
			return nil, err
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatalf("reseal output %q: %v", out, err)
		}
		return m, nil
	}
	rawB, _ := base64.StdEncoding.DecodeString(keyB)
	if m, err := reseal(keyB + "," + keyA); err != nil || m["resealed"] != 2.0 || m["keyId"] != banking.WebhookKeyID(rawB) {
		t.Fatalf("reseal: %v %v", m, err)
	}
	if m, err := reseal(keyB); err != nil || m["resealed"] != 0.0 || m["current"] != 2.0 {
		t.Fatalf("second reseal: %v %v", m, err)
	}
	// A is retired: a rotation back to it cannot open the secrets, and
	// says whose they are.
	if _, err := reseal(keyA); err == nil || !strings.Contains(err.Error(), banking.SandboxClientID) || !strings.Contains(err.Error(), "second-partner") {
		t.Fatalf("reseal with the retired key alone: %v", err)
	}
	if _, err := reseal(keyA + ",not-base64"); err == nil || !strings.Contains(err.Error(), "key 2") {
		t.Fatalf("bad key: %v", err)
	}
	for _, out := range outputs {
		if strings.Contains(out, keyA) || strings.Contains(out, keyB) {
			t.Fatalf("a key in the output: %s", out)
		}
	}

	ts := startServer(t, "--data-dir", dir, "--banking-webhook-key", keyB, "--banking-webhook-interval", "50ms", "--banking-webhook-allow-private")
	ts.dataDir = dir
	ids := map[string]string{banking.SandboxClientID: "d0000000-0000-4000-8000-000000000001", "second-partner": "d0000000-0000-4000-8000-000000000002"}
	tokens := map[string]string{}
	for client, id := range ids {
		out, err := bankingEnvCLI(t, dir, noEnv, "token", "--scope", "PAY_DOC_RU", "--client", client)
		var tok struct {
			AccessToken string `json:"access_token"`
		}
		if err != nil || json.Unmarshal([]byte(out), &tok) != nil {
			t.Fatalf("token %s: %v %s", client, err, out)
		}
		tokens[client] = tok.AccessToken
		req, _ := http.NewRequest("POST", ts.urls["banking"]+"/fintech/api/v1/payments", strings.NewReader(sandboxPaymentBody(id)))
		req.Header.Set("Authorization", tok.AccessToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 201 {
			t.Fatalf("pay %s: %d", client, resp.StatusCode)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		done := len(got[banking.SandboxClientID]) == 1 && len(got["second-partner"]) == 1
		mu.Unlock()
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("deliveries after rotation: %v", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for client, id := range ids {
		if got[client][0] != id {
			t.Fatalf("%s received %v", client, got[client])
		}
		// The delivery log per partner: its own event only, by CLI and API.
		for {
			out, err := bankingEnvCLI(t, dir, noEnv, "webhook", "deliveries", "--client-id", client)
			var log struct {
				Deliveries []struct{ ExternalID, State string }
			}
			if err != nil || json.Unmarshal([]byte(out), &log) != nil || len(log.Deliveries) != 1 || log.Deliveries[0].ExternalID != id {
				t.Fatalf("%s CLI log: %v %s", client, err, out)
			}
			if log.Deliveries[0].State == "DELIVERED" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s not DELIVERED: %s", client, out)
			}
			time.Sleep(20 * time.Millisecond)
		}
		req, _ := http.NewRequest("GET", ts.urls["banking"]+"/fintech/api/v1/webhook/deliveries", nil)
		req.Header.Set("Authorization", tokens[client])
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var log struct {
			Deliveries []struct{ ExternalID string }
		}
		_ = json.NewDecoder(resp.Body).Decode(&log)
		resp.Body.Close()
		if resp.StatusCode != 200 || len(log.Deliveries) != 1 || log.Deliveries[0].ExternalID != id {
			t.Fatalf("%s API log: %d %+v", client, resp.StatusCode, log)
		}
	}
	if strings.Contains(ts.logs.String(), keyA) || strings.Contains(ts.logs.String(), keyB) {
		t.Fatal("a key in the server log")
	}
}

// The key file holds several keys, newest first; the one made on first
// use is a single line.
func TestWebhookKeyFile(t *testing.T) {
	dir := t.TempDir()
	first, err := webhookKeys("", dir)
	if err != nil || len(first) != 1 {
		t.Fatalf("made: %d %v", len(first), err)
	}
	newer := newWebhookKey(t)
	path := filepath.Join(dir, webhookKeyFile)
	raw, _ := os.ReadFile(path)
	if err := os.WriteFile(path, []byte(newer+"\n"+string(raw)), 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := webhookKeys("", dir)
	if err != nil || len(keys) != 2 || base64.StdEncoding.EncodeToString(keys[0]) != newer || !bytes.Equal(keys[1], first[0]) {
		t.Fatalf("two keys: %d %v", len(keys), err)
	}
	for _, bad := range []string{" , ", "c2hvcnQ=", newer + "," + newer, newer + ",not-base64"} {
		_, err := webhookKeys(bad, dir)
		if err == nil || !strings.Contains(err.Error(), "--banking-webhook-key") || strings.Contains(err.Error(), newer) {
			t.Errorf("key list %q: %v", bad, err)
		}
	}
}

// A deployment default URL into a private network stops serve at once
// unless private targets are allowed; in production it must be https.
func TestBankingWebhookDefaultURLChecked(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // "" means serve starts
	}{
		{[]string{"--banking-webhook-url", "http://127.0.0.1:9/hook"}, "внутреннюю сеть"},
		{[]string{"--banking-webhook-url", "http://169.254.169.254/latest/meta-data/"}, "внутреннюю сеть"},
		{[]string{"--banking-contour", "production", "--banking-webhook-url", "http://93.184.216.34/hook"}, "https"},
	} {
		err := serve(context.Background(), append([]string{"--data-dir", t.TempDir(), "--only", "banking", "--banking-addr", "127.0.0.1:0"}, tc.args...),
			func(string) string { return "" }, stdio{in: strings.NewReader(""), out: io.Discard, err: io.Discard}, nil)
		if err == nil || !strings.Contains(err.Error(), "--banking-webhook-url") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v", tc.args, err)
		}
	}
}

// Replicas started at the same instant on one data directory (several
// serves on one PostgreSQL) all make the webhook key file on first use:
// every one must start with the one key that won, never read the file while
// the winner is still writing it (an empty file was "no key", and serve
// failed to start).
func TestWebhookKeyFileMadeByReplicasAtOnce(t *testing.T) {
	const replicas = 8
	for round := range 200 {
		dir := t.TempDir()
		keys := make([][][]byte, replicas)
		errs := make([]error, replicas)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range replicas {
			wg.Go(func() {
				<-start
				keys[i], errs[i] = webhookKeys("", dir)
			})
		}
		close(start)
		wg.Wait()
		for i := range replicas {
			if errs[i] != nil {
				t.Fatalf("round %d, replica %d: %v", round, i, errs[i])
			}
			if len(keys[i]) != 1 || !bytes.Equal(keys[i][0], keys[0][0]) {
				t.Fatalf("round %d: replica %d has another key than replica 0", round, i)
			}
		}
	}
}
