package main

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// A team's CI configuration holds its test clients' credentials, so the
// fixtures it creates on a fresh data directory take them: the banking app's
// client_secret (`app create` and `app secret`), the assistant client's id
// and secret, and a smart home agent's password; each is then what the
// server takes on the wire, and the same fixture script on another fresh
// directory gives the same credentials.
func TestChosenCredentialsWorkOnTheWire(t *testing.T) {
	const (
		bankSecret     = "ci-bank-secret-0123456789abcdefghijklmno" // 40 characters
		sandboxSecret  = "ci-sandbox-secret-0123456789abcdefghijkl"
		assistantID    = "6f1c2d3e-4b5a-4c6d-8e7f-901234567890"
		assistantKey   = "00112233445566778899aabbccddeeff"
		agentPassword  = "ci_agent_password_0123456789abcdef"
		wrongSecret    = "wrong-secret-0123456789abcdefghijklmnopq"
		authorizationK = "NmYxYzJkM2UtNGI1YS00YzZkLThlN2YtOTAxMjM0NTY3ODkwOjAwMTEyMjMzNDQ1NTY2Nzc4ODk5YWFiYmNjZGRlZWZm"
	)
	for _, round := range []string{"first data dir", "second data dir"} {
		t.Run(round, func(t *testing.T) {
			ts := startServer(t)
			dir := ts.dataDir
			app, err := runCLI(t, "banking", "app", "create", "--name", "CI", "--redirect-uri", "http://localhost/cb",
				"--client-id", "ci-app", "--client-secret", bankSecret, "--data-dir", dir)
			if err != nil || app["client_secret"] != bankSecret {
				t.Fatalf("app create --client-secret: %v %v", app, err)
			}
			if out, err := runCLI(t, "banking", "app", "secret", "--client-secret", sandboxSecret, "--data-dir", dir); err != nil || out["client_secret"] != sandboxSecret {
				t.Fatalf("app secret --client-secret: %v %v", out, err)
			}
			for _, c := range []struct{ client, secret, want string }{
				{"ci-app", bankSecret, "invalid_grant"},
				{"ci-app", wrongSecret, "invalid_client"},
				{"sandbox-partner", sandboxSecret, "invalid_grant"},
			} {
				// A refresh with a made-up token: the secret is checked
				// first, so invalid_grant says it was taken.
				form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"made-up"},
					"client_id": {c.client}, "client_secret": {c.secret}}
				resp, err := http.PostForm(ts.urls["banking"]+"/ic/sso/api/v2/oauth/token", form)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if !strings.Contains(string(body), `"error":"`+c.want+`"`) {
					t.Errorf("token endpoint for %s with secret %s: %d %s, want %s", c.client, c.secret, resp.StatusCode, body, c.want)
				}
			}

			creds, err := createAssistantClient(t, dir, "--client-id", assistantID, "--client-secret", assistantKey)
			if err != nil || creds["authorization_key"] != authorizationK {
				t.Fatalf("assistant client create with a chosen id and secret: %v %v", creds, err)
			}
			if tok := assistantToken(t, ts.urls["assistant"], "GIGACHAT_API_CORP", authorizationK); tok == "" {
				t.Error("the chosen authorization key got no token")
			}

			agent, err := runCLI(t, "smarthome", "agent", "create", "--login", "ci-agent", "--password", agentPassword, "--data-dir", dir)
			if err != nil || agent["password"] != agentPassword {
				t.Fatalf("smarthome agent create --password: %v %v", agent, err)
			}
			for _, c := range []struct {
				password string
				want     int
			}{{agentPassword, http.StatusOK}, {agentPassword + "x", http.StatusUnauthorized}} {
				req, _ := http.NewRequest("GET", ts.urls["smarthome"]+"/v1/mqtt-gate/categories", nil)
				req.SetBasicAuth("ci-agent", c.password)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != c.want {
					t.Errorf("agent with password %q: %d, want %d", c.password, resp.StatusCode, c.want)
				}
			}
		})
	}
}

// A chosen credential is refused, naming its flag and the form it must
// have, when it is shorter or of other characters than a generated one
// (only an unsalted hash of it is stored), and an assistant client id that
// is not a UUID or is taken is refused; nothing is created then.
func TestChosenCredentialsRefused(t *testing.T) {
	dir := t.TempDir()
	if _, err := createAssistantClient(t, dir, "--client-id", "6f1c2d3e-4b5a-4c6d-8e7f-901234567890", "--client-secret", strings.Repeat("a", 32)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"short bank secret", []string{"banking", "app", "create", "--name", "CI", "--redirect-uri", "http://localhost/cb", "--client-secret", "short"}, "--client-secret must be 40 characters"},
		{"bank secret with a space", []string{"banking", "app", "secret", "--client-secret", strings.Repeat("a", 39) + " "}, "--client-secret must be 40 characters"},
		{"assistant id not a UUID", []string{"assistant", "client", "create", "--client-id", "ci-client"}, "not a UUID"},
		{"assistant id taken", []string{"assistant", "client", "create", "--client-id", "6f1c2d3e-4b5a-4c6d-8e7f-901234567890"}, "a client with this id exists"},
		{"short assistant secret", []string{"assistant", "client", "create", "--client-secret", strings.Repeat("a", 31)}, "--client-secret must be 32-128 characters"},
		{"assistant secret with a colon", []string{"assistant", "client", "create", "--client-secret", strings.Repeat("a", 32) + ":"}, "--client-secret must be 32-128 characters"},
		{"short agent password", []string{"smarthome", "agent", "create", "--login", "a", "--password", "secret"}, "--password must be 32-128 characters"},
		{"password on rotate", []string{"smarthome", "agent", "rotate", "--login", "a", "--password", strings.Repeat("a", 32)}, "--password: only create takes it"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := runCLI(t, append(c.args, "--data-dir", dir)...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("%v: %v %v, want an error containing %q", c.args, out, err, c.want)
			}
		})
	}
	if out, err := runCLI(t, "smarthome", "agent", "rotate", "--login", "a", "--data-dir", dir); err == nil {
		t.Errorf("agent a exists after its refused create: %v", out)
	}
}
