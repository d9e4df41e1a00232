package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// opaqueGet asks for the categories with Authorization: Basic <cred>, the
// opaque form of the provider's curl sample (reference §2), until it
// answers want or two seconds pass: a credential created or deleted by the
// CLI, another process, is seen within twice smarthome.DefaultRecheck.
func opaqueGet(t *testing.T, base, authorization string, want int) (*http.Response, []byte) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		resp, body := get(t, base+"/v1/mqtt-gate/categories", "Authorization", authorization, "Content-Type", "application/json")
		if resp.StatusCode == want || time.Now().After(deadline) {
			return resp, body
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestSmarthomeOpaqueCredential(t *testing.T) {
	const opaque = "qwerty-1234-5678-9abc-def012345678"
	sum := sha256.Sum256([]byte(opaque))
	ts := startServer(t, "--only", "smarthome",
		"--smarthome-opaque-credentials", "agent-7=sha256:"+hex.EncodeToString(sum[:]))
	base := ts.urls["smarthome"]
	basic := provision(t, ts.dataDir, "agent", "agent-7")
	basic.base = base

	// The opaque credential stands for agent-7, as its login and password do.
	resp, body := opaqueGet(t, base, "Basic "+opaque, 200)
	golden, _ := os.ReadFile("testdata/smarthome/categories.json")
	if resp.StatusCode != 200 || !bytes.Equal(body, golden) {
		t.Fatalf("opaque credential: %d %s", resp.StatusCode, body)
	}
	if resp, body := get(t, base+"/v1/mqtt-gate/categories", "Authorization", "basic "+opaque); resp.StatusCode != 200 {
		t.Fatalf("scheme in lower case: %d %s", resp.StatusCode, body)
	}
	// RFC 9110 §11.4 separates the scheme from the credentials with one or
	// more spaces, none of which is the credential's.
	if resp, body := get(t, base+"/v1/mqtt-gate/categories", "Authorization", "Basic  "+opaque); resp.StatusCode != 200 {
		t.Fatalf("two spaces after the scheme: %d %s", resp.StatusCode, body)
	}
	if resp, body := basic.do("GET", "/v1/mqtt-gate/categories", nil); resp.StatusCode != 200 {
		t.Fatalf("login and password beside the opaque credential: %d %s", resp.StatusCode, body)
	}

	// A wrong one, one differing by a character, or the right one with
	// something around it, is the 401 of any bad credential.
	for _, wrong := range []string{"qwerty-1234-5678-9abc-def012345679", "Bearer " + opaque, "Basic " + opaque + "x", "Basic\t" + opaque, "Basic"} {
		resp, body := get(t, base+"/v1/mqtt-gate/categories", "Authorization", wrong)
		wantCommonError(t, resp, body, 401)
		if !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic realm=") {
			t.Errorf("%q: 401 without WWW-Authenticate: %q", wrong, resp.Header.Get("WWW-Authenticate"))
		}
	}

	// An agent's credentials are for agents: the admin API refuses it.
	resp, body = get(t, base+"/v1/admin/models", "Authorization", "Basic "+opaque)
	wantCommonError(t, resp, body, 401)

	// Deleting the agent ends every credential of it, the opaque one too.
	err := runSmarthome(context.Background(), []string{"agent", "delete", "--login", "agent-7", "--data-dir", ts.dataDir},
		func(string) string { return "" }, stdio{in: strings.NewReader(""), out: io.Discard, err: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	resp, body = opaqueGet(t, base, "Basic "+opaque, 401)
	wantCommonError(t, resp, body, 401)

	if logs := ts.logs.String(); strings.Contains(logs, "qwerty") || strings.Contains(logs, hex.EncodeToString(sum[:])) {
		t.Errorf("the credential or its hash reached the log:\n%s", logs)
	}
}

// TestSmarthomeOpaqueCredentialFlag: the flag takes hashes only, so that no
// configuration holds the credential in clear, and its errors never repeat
// what they refuse.
func TestSmarthomeOpaqueCredentialFlag(t *testing.T) {
	const secret = "qwerty-1234-5678-9abc-def012345678"
	hash := "sha256:" + strings.Repeat("ab", 32)
	cases := []struct{ name, value, want string }{
		{"credential in clear", "agent-7=" + secret, "sha256:"},
		{"no login", "=" + hash, "login"},
		{"bad login", "agent 7=" + hash, "login"},
		{"short hash", "agent-7=sha256:abcd", "64 hex"},
		{"one hash twice", "agent-7=" + hash + ",agent-8=" + hash, "twice"},
		{"no equals sign", secret, "LOGIN=sha256:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			args := []string{"--data-dir", t.TempDir(), "--only", "smarthome", "--smarthome-addr", "127.0.0.1:0",
				"--smarthome-opaque-credentials", c.value}
			err := serve(ctx, args, func(string) string { return "" }, stdio{out: io.Discard, err: io.Discard}, func(map[string]string) {
				t.Error("serve started despite a bad --smarthome-opaque-credentials")
				cancel()
			})
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "smarthome-opaque-credentials") {
				t.Fatalf("err = %v, want the flag and %q named", err, c.want)
			}
			if strings.Contains(err.Error(), "qwerty") || strings.Contains(err.Error(), "abab") {
				t.Errorf("the error repeats the value: %v", err)
			}
		})
	}
}
