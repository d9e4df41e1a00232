package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestNpmClientAuth runs the unmodified npm gigachat client's ways to
// authenticate that reference §7 lists against a live server: settings
// from the GIGACHAT_* environment alone, the 401 that makes it drop a
// token, fetch another and retry once, and token-only mode, where a
// refused token is the client's AuthenticationError with the server's
// {status: 401, message: Unauthorized}; and stream_readable, the stream
// as an event emitter.
func TestNpmClientAuth(t *testing.T) {
	node, pkg := npmClient(t, "the npm gigachat client's authentication test")
	data := t.TempDir()
	creds, err := createAssistantClient(t, data, "--scope", "ASSISTANT_API_CORP")
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, "--data-dir", data, "--models-dir", assistantModelsDir(t), "--only", "assistant")
	base := ts.urls["assistant"]
	token := assistantToken(t, base, "ASSISTANT_API_CORP", creds["authorization_key"])
	cmd := exec.Command(node, filepath.Join(pkg, "auth.js"))
	// The client reads GIGACHAT_* when it is loaded; none of the script's
	// constructors names a URL, the credentials or the scope.
	cmd.Env = append(os.Environ(), "GIGACHAT_BASE_URL="+base+"/api/v1", "GIGACHAT_AUTH_URL="+base+"/api/v2/oauth",
		"GIGACHAT_CREDENTIALS="+creds["authorization_key"], "GIGACHAT_SCOPE=GIGACHAT_API_CORP", "GIGACHAT_MODEL=stories260K",
		"GIGACHAT_TIMEOUT=60", "SMOKE_ACCESS_TOKEN="+token)
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-done:
		case <-time.After(2 * time.Minute):
			_ = cmd.Process.Kill()
		}
	}()
	out, err := cmd.CombinedOutput()
	var res struct {
		Env struct {
			Model, Finish, Content string
		}
		Readable struct {
			Content, Finish string
		}
		Stale, TokenOnly []string
		Refused          json.RawMessage
	}
	npmResult(t, out, err, &res)
	if !strings.HasPrefix(res.Env.Model, "stories260K:") || res.Env.Finish != "length" {
		t.Errorf("chat from the environment's settings: %+v", res.Env)
	}
	// Greedy: the emitter's stream says what the JSON answer said.
	if res.Readable.Content != res.Env.Content || res.Readable.Finish != "length" {
		t.Errorf("stream_readable %+v, chat %q", res.Readable, res.Env.Content)
	}
	if len(res.Stale) != 1 || res.Stale[0] != "stories260K:1.0" {
		t.Errorf("after a refused token: models %v", res.Stale)
	}
	if len(res.TokenOnly) != 1 || res.TokenOnly[0] != "stories260K:1.0" {
		t.Errorf("token-only mode: models %v", res.TokenOnly)
	}
	var refused struct {
		Name   string
		Status int
		Body   errorEnvelope
	}
	if json.Unmarshal(res.Refused, &refused) != nil || refused.Name != "AuthenticationError" || refused.Status != 401 ||
		refused.Body.Status != 401 || refused.Body.Message != "Unauthorized" {
		t.Errorf("token-only mode with a refused token: %s", res.Refused)
	}
}

// errorEnvelope is the assistant API's error body (reference §4).
type errorEnvelope struct {
	Status  int    `json:"status"`
	Message string `json:"message"`
}
