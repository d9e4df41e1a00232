package main

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/testenv"
)

// serveStarts runs banking's serve on dir with args until it is ready, then
// stops it; it returns serve's error when serve refuses to start instead.
func serveStarts(t *testing.T, dir string, args ...string) error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	args = append([]string{"--only", "banking", "--data-dir", dir, "--banking-addr", "127.0.0.1:0", "--log-flush-interval", "0", "--shutdown-timeout", "5s"}, args...)
	logs := &testenv.LogBuffer{}
	ready := make(chan struct{}, 1)
	errc := make(chan error, 1)
	go func() {
		errc <- serve(ctx, args, func(string) string { return "" }, stdio{in: strings.NewReader(""), out: io.Discard, err: logs},
			func(map[string]string) { ready <- struct{}{} })
	}()
	select {
	case <-ready:
		cancel()
		if err := <-errc; err != nil {
			t.Fatalf("serve stopped with %v", err)
		}
		return nil
	case err := <-errc:
		if err == nil {
			t.Fatal("serve returned nil without starting")
		}
		return err
	case <-time.After(60 * time.Second):
		t.Fatal("serve neither started nor failed in 60s")
		return nil
	}
}

// writeRSAKeyPEM writes a fresh RS256 id-token key as an operator would.
func writeRSAKeyPEM(t *testing.T) string {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	data, err := banking.MarshalIDTokenRSAKeyPEM(k)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "rsa.pem")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A deployment's keys are recorded at its first start and every later
// start must hold the same ones: a data directory with another bank JWS
// key, RS256 key or webhook key (one restored from elsewhere, a replica's
// not copied) stops serve with one line naming the key, both identities
// and the remedy; `banking keys adopt` records a key replaced on purpose;
// a webhook rotation NEW,OLD starts and moves the record to NEW.
func TestServeRefusesKeysOtherThanRecorded(t *testing.T) {
	dir := t.TempDir()
	if err := serveStarts(t, dir, "--banking-id-token-alg", "RS256"); err != nil {
		t.Fatalf("first start: %v", err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, webhookKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	oldHook, newHook, otherHook := strings.TrimSpace(string(raw)), newWebhookKey(t), newWebhookKey(t)
	otherJWS, otherKey := writeBankKeyPEM(t)
	otherRSA := writeRSAKeyPEM(t)
	adopt := func(args ...string) {
		t.Helper()
		out, err := bankingEnvCLI(t, dir, map[string]string{}, append([]string{"keys", "adopt"}, args...)...)
		var rec map[string]string
		if err != nil || json.Unmarshal([]byte(out), &rec) != nil || rec[keyRecordJWS] == "" || rec[keyRecordWebhook] == "" {
			t.Fatalf("keys adopt %v: %v %s", args, err, out)
		}
		for _, k := range []string{oldHook, newHook, otherHook} {
			if strings.Contains(out, k) {
				t.Fatal("keys adopt printed a webhook key")
			}
		}
	}
	steps := []struct {
		name  string
		do    func()   // before the start, if set
		args  []string // serve's flags
		wants []string // in the refusal; none: it starts
	}{
		{name: "same keys", args: []string{"--banking-id-token-alg", "RS256"}},
		{name: "gost id tokens need no RS256 key", args: nil},
		{name: "other JWS key", args: []string{"--banking-jws-key", otherJWS},
			wants: []string{"bank JWS key (--banking-jws-key " + otherJWS + ")", "present kid " + otherKey.Kid[:8] + "…", "banking keys adopt", "copy the key files"}},
		{name: "other RS256 key", args: []string{"--banking-id-token-alg", "RS256", "--banking-id-token-rsa-key", otherRSA},
			wants: []string{"RS256 id-token key (--banking-id-token-rsa-key " + otherRSA + ")"}},
		{name: "other webhook key", args: []string{"--banking-webhook-key", otherHook},
			wants: []string{"newest webhook key (--banking-webhook-key)", "recorded key id " + banking.WebhookKeyID(decodeKey(t, oldHook))}},
		{name: "webhook rotation in progress", args: []string{"--banking-webhook-key", newHook + "," + oldHook}},
		{name: "old webhook key alone after the rotation", args: []string{"--banking-webhook-key", oldHook},
			wants: []string{"recorded key id " + banking.WebhookKeyID(decodeKey(t, newHook))}},
		{name: "new webhook key alone", args: []string{"--banking-webhook-key", newHook}},
		{name: "adopted JWS key", do: func() { adopt("--banking-jws-key", otherJWS, "--banking-webhook-key", newHook) },
			args: []string{"--banking-jws-key", otherJWS, "--banking-webhook-key", newHook}},
		{name: "data directory's JWS key after adopting another", args: []string{"--banking-webhook-key", newHook},
			wants: []string{"bank JWS key (--banking-jws-key, default banking-jws-key.pem in --data-dir " + dir + ")"}},
		// `webhook reseal` moves the record as a start with NEW,OLD does,
		// so the old key may be dropped before any restart.
		{name: "resealed under another key, the old one dropped", do: func() {
			if out, err := bankingEnvCLI(t, dir, map[string]string{}, "webhook", "reseal", "--banking-webhook-key", otherHook+","+newHook); err != nil {
				t.Fatalf("reseal: %v %s", err, out)
			}
		}, args: []string{"--banking-jws-key", otherJWS, "--banking-webhook-key", otherHook}},
	}
	for _, st := range steps {
		if st.do != nil {
			st.do()
		}
		err := serveStarts(t, dir, st.args...)
		if len(st.wants) == 0 {
			if err != nil {
				t.Fatalf("%s: %v", st.name, err)
			}
			continue
		}
		if err == nil {
			t.Fatalf("%s: serve started", st.name)
		}
		msg := err.Error()
		for _, want := range st.wants {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: %q lacks %q", st.name, msg, want)
			}
		}
		if strings.Contains(msg, "\n") || strings.Contains(msg, oldHook) || strings.Contains(msg, newHook) || strings.Contains(msg, otherHook) {
			t.Errorf("%s: not one line, or a key in it: %q", st.name, msg)
		}
	}
}

func decodeKey(t *testing.T, b64 string) []byte {
	t.Helper()
	keys, err := parseWebhookKeys([]string{b64})
	if err != nil {
		t.Fatal(err)
	}
	return keys[0]
}
