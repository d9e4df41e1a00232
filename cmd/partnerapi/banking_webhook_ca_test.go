package main

import (
	"context"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A receiver whose certificate an own CA issued (here httptest's
// self-signed one) gets its webhooks once the operator names that CA in
// --banking-webhook-ca: the server trusts it besides the system's roots,
// with no change to the process's trust (before, the only way was
// SSL_CERT_FILE, Linux only, replacing the system's bundle).
func TestBankingWebhookCA(t *testing.T) {
	got := make(chan string, 4)
	receiver := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- string(body)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()
	ca := filepath.Join(t.TempDir(), "receiver-ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: receiver.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, "--only", "banking", "--banking-webhook-interval", "50ms", "--banking-webhook-allow-private",
		"--banking-webhook-url", receiver.URL, "--banking-webhook-secret", "ca-hook-secret-0001", "--banking-webhook-ca", ca)
	tok := "Bearer " + bankingToken(t, ts, "PAY_DOC_RU")
	const id = "d0000000-0000-4000-8000-0000000000ca"
	formatPayment(t, ts, tok, id)
	select {
	case body := <-got:
		if !strings.Contains(body, id) {
			t.Fatalf("webhook %s, want %s's", body, id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no webhook over HTTPS in 10s")
	}
}

// A --banking-webhook-ca that cannot be read, or holds no certificate,
// stops serve at once, naming the flag.
func TestBankingWebhookCAChecked(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.pem")
	if err := os.WriteFile(empty, []byte("no certificate here\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{empty, filepath.Join(dir, "missing.pem")} {
		err := serve(context.Background(), []string{"--data-dir", t.TempDir(), "--only", "banking", "--banking-addr", "127.0.0.1:0", "--banking-webhook-ca", file},
			func(string) string { return "" }, stdio{in: strings.NewReader(""), out: io.Discard, err: io.Discard}, nil)
		if err == nil || !strings.Contains(err.Error(), "banking-webhook-ca") {
			t.Errorf("%s: %v", file, err)
		}
	}
}
