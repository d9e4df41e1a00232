package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/testenv"
)

// createAssistantClient runs `partnerapi assistant client create`.
func createAssistantClient(t *testing.T, dataDir string, args ...string) (map[string]string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := runAssistant(context.Background(), append([]string{"client", "create", "--data-dir", dataDir}, args...),
		func(string) string { return "" }, stdio{in: strings.NewReader(""), out: &out, err: &errb})
	if err != nil {
		return nil, err
	}
	var creds map[string]string
	if err := json.Unmarshal(out.Bytes(), &creds); err != nil {
		t.Fatalf("client create printed %q: %v", out.String(), err)
	}
	return creds, nil
}

func TestAssistantClientCreateCLI(t *testing.T) {
	dir := t.TempDir()
	creds, err := createAssistantClient(t, dir, "--scope", "GIGACHAT_API_B2B", "--balance", "stories260K=1000")
	if err != nil {
		t.Fatal(err)
	}
	key, _ := base64.StdEncoding.DecodeString(creds["authorization_key"])
	if creds["client_id"] == "" || creds["client_secret"] == "" || string(key) != creds["client_id"]+":"+creds["client_secret"] {
		t.Fatalf("credentials %v", creds)
	}
	for _, bad := range [][]string{
		{"--scope", "NOPE"},
		{"--scope", "ASSISTANT_API_CORP", "--balance", "m=5"},
		{"--scope", "ASSISTANT_API_PERS", "--balance", "m=-1"},
		{"--scope", "ASSISTANT_API_PERS", "--balance", "nomodel"},
	} {
		if _, err := createAssistantClient(t, dir, bad...); err == nil {
			t.Errorf("client create %v succeeded", bad)
		}
	}
}

// Serve with no models says how to add one, naming its own --models-dir
// (quoted for a shell when it has to be) rather than a placeholder.
func TestAssistantServeEmptyModelsDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "my models")
	ts := startServer(t, "--only", "assistant", "--models-dir", dir)
	logs := ts.logs.String()
	if !strings.Contains(logs, "no models served") {
		t.Fatalf("serve with no models does not say how to add one:\n%s", logs)
	}
	if want := "--models-dir '" + dir + "'"; !strings.Contains(logs, want) || strings.Contains(logs, "--models-dir DIR") {
		t.Errorf("the warning does not name %s:\n%s", want, logs)
	}
}

func TestShellWord(t *testing.T) {
	for in, want := range map[string]string{
		"./models":            "./models",
		"/var/lib/models-1.0": "/var/lib/models-1.0",
		"my models":           "'my models'",
		"it's":                `'it'\''s'`,
		"$HOME/m":             "'$HOME/m'",
		"~/m":                 "'~/m'",
		"":                    "''",
	} {
		if got := shellWord(in); got != want {
			t.Errorf("shellWord(%q) = %s, want %s", in, got, want)
		}
	}
}

// assistantModelsDir is a models directory serving only stories260K (a
// symlink: models are never copied).
func assistantModelsDir(t *testing.T) string {
	t.Helper()
	model := testenv.Model(t, "stories260K.gguf")
	dir := t.TempDir()
	if err := os.Symlink(model, filepath.Join(dir, "stories260K.gguf")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestNpmClient runs the official npm `gigachat` client, unmodified, against
// a live server with stories260K.
func TestNpmClient(t *testing.T) {
	node, pkg := npmClient(t, "the npm gigachat client test")
	data := t.TempDir()
	for _, scope := range []string{"GIGACHAT_API_PERS", "ASSISTANT_API_CORP"} {
		t.Run(scope, func(t *testing.T) {
			args := []string{"--scope", scope}
			if scope != "ASSISTANT_API_CORP" {
				args = append(args, "--balance", "stories260K=100000")
			}
			creds, err := createAssistantClient(t, data, args...)
			if err != nil {
				t.Fatal(err)
			}
			ts := startServer(t, "--data-dir", data, "--models-dir", assistantModelsDir(t), "--only", "assistant")
			base := ts.urls["assistant"]
			out, err := runClientScript(node, pkg, "smoke.js", 2*time.Minute, base, creds["authorization_key"], scope, "stories260K")
			var res struct {
				Models []string
				Model  string
				Chat   struct {
					Content, Finish string
					Usage           struct {
						Total int `json:"total_tokens"`
					}
				}
				Stream struct {
					Content, Finish string
					Chunks          int
				}
				Big struct {
					Events, Chars int
				}
				Tokens  []int
				Balance []struct {
					Usage string
					Value int
				}
				BalanceStatus any `json:"balance_status"`
			}
			npmResult(t, out, err, &res)
			if len(res.Models) != 1 || res.Models[0] != "stories260K:1.0" || res.Model != "stories260K:1.0" {
				t.Errorf("models %v / %q", res.Models, res.Model)
			}
			if res.Chat.Content == "" || res.Chat.Finish != "length" || res.Chat.Usage.Total == 0 {
				t.Errorf("chat %+v", res.Chat)
			}
			// Greedy: the stream must say exactly what the JSON answer said.
			if res.Stream.Content != res.Chat.Content || res.Stream.Finish != "length" || res.Stream.Chunks < 3 {
				t.Errorf("stream %+v, chat %q", res.Stream, res.Chat.Content)
			}
			if len(res.Tokens) != 2 || res.Tokens[0] < 1 {
				t.Errorf("tokens %v", res.Tokens)
			}
			// Four choices held back by update_interval: one event over
			// net/http's 4 KiB buffer, which the client read whole.
			if res.Big.Chars < 4200 || res.Big.Events > 3 {
				t.Errorf("large event: %+v, want over 4 200 characters in at most 3 events", res.Big)
			}
			if scope == "ASSISTANT_API_CORP" {
				if res.BalanceStatus != float64(403) {
					t.Errorf("postpaid balance: status %v, want 403", res.BalanceStatus)
				}
			} else if len(res.Balance) != 1 || res.Balance[0].Usage != "stories260K" || res.Balance[0].Value >= 100000 {
				t.Errorf("balance %+v", res.Balance)
			}
		})
	}
}

// TestBenchAssistant runs the HTTP benchmark with one prompt for every
// client and with distinct ones.
func TestBenchAssistant(t *testing.T) {
	dir := assistantModelsDir(t)
	for _, extra := range [][]string{nil, {"--distinct-prompts"}} {
		var out bytes.Buffer
		args := append([]string{"--models-dir", dir, "--clients", "3", "--max-tokens", "8"}, extra...)
		if err := benchAssistant(context.Background(), args, func(string) string { return "" }, stdio{in: strings.NewReader(""), out: &out, err: &out}); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"3 concurrent streaming clients", "time to first token: min", "completion tokens 24 in", "tok/s aggregate"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%v: bench output lacks %q:\n%s", extra, want, out.String())
			}
		}
	}
}

func TestModelsList(t *testing.T) {
	var out bytes.Buffer
	err := runModels(context.Background(), []string{"list", "--models-dir", assistantModelsDir(t)},
		func(string) string { return "" }, stdio{in: strings.NewReader(""), out: &out, err: &out})
	if err != nil || !strings.HasPrefix(out.String(), "stories260K:1.0\tchat\tcontext=") {
		t.Fatalf("models list: %v\n%s", err, out.String())
	}
	if err := runModels(context.Background(), []string{"pull"}, func(string) string { return "" }, stdio{out: &out, err: &out}); err == nil {
		t.Fatal("models pull is not implemented and must say so")
	}
}

// npmClient finds node and the clients/npm package with the unmodified
// `gigachat` and `langchain-gigachat` clients installed (running npm ci when
// CI has not, or when node_modules predates one of them), or skips the test
// loudly, naming what did not run.
func npmClient(t *testing.T, what string) (node, pkg string) {
	t.Helper()
	node, errNode := exec.LookPath("node")
	npm, errNpm := exec.LookPath("npm")
	if errNode != nil || errNpm != nil {
		t.Skipf("SKIPPING: npm/node not installed; %s did not run", what)
	}
	root, ok := testenv.RepoRoot()
	if !ok {
		t.Fatal("no repository root")
	}
	pkg = filepath.Join(root, "clients", "npm")
	_, errGigaChat := os.Stat(filepath.Join(pkg, "node_modules", "gigachat"))
	_, errLangChain := os.Stat(filepath.Join(pkg, "node_modules", "langchain-gigachat"))
	if errGigaChat != nil || errLangChain != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if out, err := exec.CommandContext(ctx, npm, "ci", "--prefix", pkg).CombinedOutput(); err != nil {
			t.Skipf("SKIPPING: npm ci failed (offline?): %v\n%s", err, out)
		}
	}
	return node, pkg
}

// npmResult decodes into v the last line of a client script's output that
// starts with RESULT (the SDKs print their own lines before it), failing
// the test with the whole output when the script failed or printed none.
// runClientScript runs one of clients/npm's scripts against the assistant
// at base with the client's authorization key, scope and model (and extra
// NAME=VALUE settings), and returns what it printed.
func runClientScript(node, pkg, script string, timeout time.Duration, base, key, scope, model string, extra ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(pkg, script))
	cmd.Env = append(append(os.Environ(),
		"SMOKE_BASE_URL="+base+"/api/v1", "SMOKE_AUTH_URL="+base+"/api/v2/oauth",
		"SMOKE_CREDENTIALS="+key, "SMOKE_SCOPE="+scope, "SMOKE_MODEL="+model), extra...)
	return cmd.CombinedOutput()
}

func npmResult(t *testing.T, out []byte, runErr error, v any) {
	t.Helper()
	var line string
	for _, l := range strings.Split(string(out), "\n") {
		if r, ok := strings.CutPrefix(l, "RESULT "); ok {
			line = r
		}
	}
	if runErr != nil || json.Unmarshal([]byte(line), v) != nil {
		t.Fatalf("npm client failed: %v\n%s", runErr, out)
	}
}

// assistantToken exchanges an authorization key for an access token at
// the live server's /api/v2/oauth.
func assistantToken(t *testing.T, base, scope, authorizationKey string) string {
	t.Helper()
	form := url.Values{"scope": {scope}}
	req, _ := http.NewRequest("POST", base+"/api/v2/oauth", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("RqUID", "72384bd5-0ca0-4cfd-9ac7-65d75258284c")
	req.Header.Set("Authorization", "Basic "+authorizationKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || resp.StatusCode != 200 {
		t.Fatalf("token: %d %v", resp.StatusCode, err)
	}
	return tok.AccessToken
}
