package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// aliasedServer serves stories260K also as GigaChat to a postpaid client,
// returning the assistant's base URL and the client's authorization key.
func aliasedServer(t *testing.T) (base, key string) {
	t.Helper()
	data := t.TempDir()
	creds, err := createAssistantClient(t, data, "--scope", "ASSISTANT_API_CORP")
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, "--data-dir", data, "--models-dir", assistantModelsDir(t), "--only", "assistant",
		"--assistant-model-alias", "GigaChat=stories260K")
	return ts.urls["assistant"], creds["authorization_key"]
}

// TestAssistantModelAlias serves stories260K under the provider's name
// GigaChat too: it is listed, resolved with or without a version, and a
// greedy chat with it says exactly what a chat with stories260K says,
// with the alias as the answer's model.
func TestAssistantModelAlias(t *testing.T) {
	base, key := aliasedServer(t)
	token := assistantToken(t, base, "ASSISTANT_API_CORP", key)
	resp, body := get(t, base+"/api/v1/models", "Authorization", "Bearer "+token)
	var list struct{ Data []struct{ ID string } }
	if err := json.Unmarshal(body, &list); err != nil || resp.StatusCode != 200 {
		t.Fatalf("models: %d %s", resp.StatusCode, body)
	}
	var ids []string
	for _, m := range list.Data {
		ids = append(ids, m.ID)
	}
	if strings.Join(ids, " ") != "stories260K:1.0 GigaChat:1.0" {
		t.Errorf("models %v, want stories260K:1.0 and its alias GigaChat:1.0", ids)
	}
	if resp, body := get(t, base+"/api/v1/models/GigaChat", "Authorization", "Bearer "+token); resp.StatusCode != 200 || !strings.Contains(string(body), `"GigaChat:1.0"`) {
		t.Errorf("GET /models/GigaChat: %d %s", resp.StatusCode, body)
	}
	chat := func(model string) (content, answeredModel string) {
		req, _ := http.NewRequest("POST", base+"/api/v1/chat/completions", strings.NewReader(
			`{"model":"`+model+`","messages":[{"role":"user","content":"Once upon a time"}],"temperature":0,"max_tokens":12}`))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var out struct {
			Model   string
			Choices []struct{ Message struct{ Content string } }
		}
		if err := json.Unmarshal(b, &out); err != nil || resp.StatusCode != 200 || len(out.Choices) != 1 {
			t.Fatalf("chat with %s: %d %s", model, resp.StatusCode, b)
		}
		return out.Choices[0].Message.Content, out.Model
	}
	want, _ := chat("stories260K")
	for _, id := range []string{"GigaChat", "GigaChat:latest"} {
		got, model := chat(id)
		if got != want || model != "GigaChat:1.0" {
			t.Errorf("chat with %s: %q as %s, want %q (stories260K's) as GigaChat:1.0", id, got, model, want)
		}
	}
}

// TestAssistantModelAliasRefused: an alias of a model that is not served,
// or of another alias, and an alias named as a served model stop serve at
// start with the reason, and a value that is not ALIAS=MODEL is refused as
// the flag is parsed.
func TestAssistantModelAliasRefused(t *testing.T) {
	models := assistantModelsDir(t)
	for _, tc := range []struct {
		value, want string
		more        []string // further serve flags
	}{
		{"GigaChat=stories", "no model stories is served (served: stories260K)", nil},
		{"GigaChat=Pro,Pro=stories260K", "Pro is an alias itself", nil},
		{"GigaChat", "want ALIAS=MODEL", nil},
		{"GigaChat:2=stories260K", "want ALIAS=MODEL", nil},
		{"GigaChat=stories260K,GigaChat=other", "already an alias of stories260K", nil},
		// An alias named as a served model (here an upstream's, which need
		// not be reachable at start) would hide that model.
		{"Embeddings=stories260K", "Embeddings is a served model", []string{"--assistant-upstream", "Embeddings=http://127.0.0.1:9#type=embedder"}},
	} {
		t.Run(tc.value, func(t *testing.T) {
			err := runServeExpectError(t, append([]string{"--data-dir", t.TempDir(), "--models-dir", models, "--only", "assistant",
				"--assistant-addr", "127.0.0.1:0", "--assistant-grpc-addr", "off", "--assistant-model-alias", tc.value}, tc.more...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("serve with --assistant-model-alias %s: %v, want an error saying %q", tc.value, err, tc.want)
			}
		})
	}
}

// runServeExpectError runs serve and returns its error, failing the test if
// it starts instead.
func runServeExpectError(t *testing.T, args ...string) error {
	t.Helper()
	ctx := t.Context()
	errc := make(chan error, 1)
	started := make(chan struct{}, 1)
	go func() {
		errc <- serve(ctx, args, func(string) string { return "" }, stdio{in: strings.NewReader(""), out: io.Discard, err: io.Discard},
			func(map[string]string) { started <- struct{}{} })
	}()
	select {
	case err := <-errc:
		return err
	case <-started:
		t.Fatal("serve started")
	case <-time.After(60 * time.Second):
		t.Fatal("serve neither started nor failed in 60s")
	}
	return nil
}

// TestNpmClientDefaultModel runs the official npm client told no model, as
// an application written for the provider is: it asks for "GigaChat", and
// with that name an alias of stories260K it works unmodified, saying what
// it says when told stories260K.
func TestNpmClientDefaultModel(t *testing.T) {
	node, pkg := npmClient(t, "the npm gigachat client's default-model test")
	base, key := aliasedServer(t)
	type result struct {
		Chat   struct{ Content, Model string }
		Stream struct{ Content string }
		Tokens []int
	}
	run := func(model string) result {
		out, err := runClientScript(node, pkg, "smoke.js", 2*time.Minute, base, key, "ASSISTANT_API_CORP", model)
		var res result
		npmResult(t, out, err, &res)
		return res
	}
	named, unnamed := run("stories260K"), run("")
	if unnamed.Chat.Model != "GigaChat:1.0" || named.Chat.Model != "stories260K:1.0" {
		t.Errorf("answers' models %q (told none) and %q (told stories260K)", unnamed.Chat.Model, named.Chat.Model)
	}
	if unnamed.Chat.Content == "" || unnamed.Chat.Content != named.Chat.Content || unnamed.Stream.Content != named.Stream.Content ||
		len(unnamed.Tokens) != 2 || unnamed.Tokens[0] != named.Tokens[0] {
		t.Errorf("told no model: %+v; told stories260K: %+v", unnamed, named)
	}
}
