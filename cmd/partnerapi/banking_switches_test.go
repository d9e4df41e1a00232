package main

import (
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/gost"
)

// The webhook retry schedule (reference §12: not published, so
// configurable) comes from its three flags, checked when the service
// starts; flags never parsed mean the defaults.
func TestBankingWebhookRetryFlags(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     []string // nil: a zero paymentFlags, never parsed
		attempts int
		backoff  time.Duration
		max      time.Duration
		err      string // in the refusal; "" accepted
	}{
		{"never parsed", nil, 10, 5 * time.Second, time.Hour, ""},
		{"defaults", []string{}, 10, 5 * time.Second, time.Hour, ""},
		{"set", []string{"--banking-webhook-max-attempts", "3", "--banking-webhook-backoff", "1s", "--banking-webhook-max-backoff", "4s"}, 3, time.Second, 4 * time.Second, ""},
		{"one attempt", []string{"--banking-webhook-max-attempts", "1"}, 1, 5 * time.Second, time.Hour, ""},
		{"ceiling equal to the first wait", []string{"--banking-webhook-backoff", "1m", "--banking-webhook-max-backoff", "1m"}, 10, time.Minute, time.Minute, ""},
		{"no attempt", []string{"--banking-webhook-max-attempts", "0"}, 0, 0, 0, "--banking-webhook-max-attempts"},
		{"negative attempts", []string{"--banking-webhook-max-attempts", "-2"}, 0, 0, 0, "--banking-webhook-max-attempts"},
		{"no wait", []string{"--banking-webhook-backoff", "0s"}, 0, 0, 0, "--banking-webhook-backoff"},
		{"ceiling under the first wait", []string{"--banking-webhook-backoff", "10s", "--banking-webhook-max-backoff", "5s"}, 0, 0, 0, "--banking-webhook-max-backoff"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f paymentFlags
			if tc.args != nil {
				fs := flag.NewFlagSet("serve", flag.ContinueOnError)
				f.register(fs)
				if err := fs.Parse(tc.args); err != nil {
					t.Fatal(err)
				}
			}
			attempts, backoff, maxBackoff, err := f.webhookRetry()
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %v, want a refusal naming %s", err, tc.err)
				}
				return
			}
			if err != nil || attempts != tc.attempts || backoff != tc.backoff || maxBackoff != tc.max {
				t.Fatalf("got %d %s %s %v, want %d %s %s", attempts, backoff, maxBackoff, err, tc.attempts, tc.backoff, tc.max)
			}
		})
	}
	// The service starts with a schedule given, and a refused one stops it.
	startServer(t, "--only", "banking", "--banking-webhook-max-attempts", "3", "--banking-webhook-backoff", "2s", "--banking-webhook-max-backoff", "8s")
	var f paymentFlags
	f.webhookAttempts = -1
	if _, err := f.build(nil, "", banking.ContourSandbox, nil, banking.DigestFormat{}, nil, nil, nil, nil, nil); err == nil || !strings.Contains(err.Error(), "--banking-webhook-max-attempts") {
		t.Fatalf("build with a refused schedule: %v", err)
	}
}

// --banking-card-not-found-cause picks the 404 cause of an unknown card
// (reference §15 #4); a value that is neither name stops the service.
func TestBankingCardNotFoundCauseFlag(t *testing.T) {
	m := &bankingModule{cardNotFound: "NOT_FOUND"}
	if _, err := m.build(context.Background(), deps{}); err == nil || !strings.Contains(err.Error(), "--banking-card-not-found-cause") {
		t.Fatalf("build with a bad cause: %v", err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "CARD_ID_NOT_FOUND"},
		{[]string{"--banking-card-not-found-cause", "DATA_NOT_FOUND_EXCEPTION"}, "DATA_NOT_FOUND_EXCEPTION"},
	} {
		ts := startServer(t, append([]string{"--only", "banking"}, tc.args...)...)
		tok := bankingToken(t, ts, banking.ScopeBusinessCardLimit)
		code, body := cardLimitPost(t, ts, tok, "application/json",
			`{"code":"NON_RENEW","businessCardId":"nope","externalId":"5e0c1a2b-0000-4000-8000-000000000090","limit":1}`)
		if code != 404 || !strings.Contains(body, `"cause":"`+tc.want+`"`) {
			t.Errorf("%v: %d %s, want 404 %s", tc.args, code, body, tc.want)
		}
	}
}

// --banking-jws-reversed reads card-limit JWS signatures byte-reversed
// (reference §9.6's switch): with it a reversed signature verifies and one
// in the CMS layout does not, without it the other way round.
func TestBankingJWSReversedFlag(t *testing.T) {
	key, _ := gost.GenerateKey(gost.TC26256A, rand.Reader)
	cert, err := gost.SelfSignedCertificate(key, "partner user", time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "c.der")
	if err := os.WriteFile(file, cert.Raw, 0o600); err != nil {
		t.Fatal(err)
	}
	const kid = "6a1b2c3d-4e5f-4a7b-8c9d-0e1f2a3b4c5e"
	payload := func(n int) []byte {
		return []byte(fmt.Sprintf(`{"code":"NON_RENEW","businessCardId":"sbc-00001","externalId":"5e0c1a2b-0000-4000-8000-%012d","limit":3}`, n))
	}
	for _, reversed := range []bool{false, true} {
		t.Run(fmt.Sprint("reversed=", reversed), func(t *testing.T) {
			args := []string{"--only", "banking"}
			if reversed {
				args = append(args, "--banking-jws-reversed")
			}
			ts := startServer(t, args...)
			runCardsCLI(t, ts, "cert", "add", "--user", banking.SandboxUserID, "--cert", file, "--uuid", kid)
			tok := bankingToken(t, ts, banking.ScopeBusinessCardLimit)
			for i, layout := range []bool{false, true} {
				jws, err := gost.SignJWSWithOptions(payload(i+1), kid, key, gost.JWSOptions{Reversed: layout})
				if err != nil {
					t.Fatal(err)
				}
				code, body := cardLimitPost(t, ts, tok, "application/jose", jws)
				if want := layout == reversed; (code == 201) != want || !want && !strings.Contains(body, "SIGN_CHECK_EXCEPTION") {
					t.Errorf("signed reversed=%v: %d %s", layout, code, body)
				}
			}
		})
	}
}

// cardLimitPost posts a card-limit application with the token.
func cardLimitPost(t *testing.T, ts *testServer, tok, ctype, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", ts.urls["banking"]+"/fintech/api/v1/business-cards/limits", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", ctype)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
