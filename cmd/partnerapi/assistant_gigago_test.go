package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Role1776/gigago"
)

// TestGigagoClient runs gigago, a third-party Go SDK of the GigaChat API
// (github.com/Role1776/gigago, unmodified, a test-only dependency), against a
// live server: its background token fetch at /api/v2/oauth, and chat
// completions with its defaults, which include max_tokens 999999999 (the
// server caps a request at the model's context instead of refusing it, as
// the provider does) and a system instruction.
func TestGigagoClient(t *testing.T) {
	data := t.TempDir()
	creds, err := createAssistantClient(t, data, "--scope", "ASSISTANT_API_PERS", "--balance", "stories260K=100000")
	if err != nil {
		t.Fatal(err)
	}
	// A 64-token window bounds what the SDK's default max_tokens asks
	// for: the server caps the request there, and the test stays short
	// under the race detector on a loaded machine (the model's own 512
	// tokens took over the SDK's 30 s timeout in CI).
	models := assistantModelsDir(t)
	if err := os.WriteFile(filepath.Join(models, "stories260K.json"), []byte(`{"context_window": 64}`), 0o644); err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, "--data-dir", data, "--models-dir", models, "--only", "assistant")
	base := ts.urls["assistant"]
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client, err := gigago.NewClient(ctx, creds["authorization_key"],
		gigago.WithCustomURLOauth(base+"/api/v2/oauth"),
		gigago.WithCustomURLAI(base+"/api/v1/chat/completions"),
		gigago.WithCustomScope("GIGACHAT_API_PERS"))
	if err != nil {
		t.Fatalf("NewClient (token fetch): %v", err)
	}
	defer client.Close()

	model := client.GenerativeModel("stories260K")
	resp, err := model.Generate(ctx, []gigago.Message{{Role: gigago.RoleUser, Content: "Once upon a time"}})
	if err != nil {
		t.Fatalf("Generate with the SDK's defaults: %v", err)
	}
	if len(resp.Choices) != 1 || resp.Choices[0].Message.Content == "" || resp.Choices[0].Message.Role != "assistant" {
		t.Fatalf("choices %+v", resp.Choices)
	}
	if f := resp.Choices[0].FinishReason; f != "stop" && f != "length" {
		t.Errorf("finish_reason %q", f)
	}
	if u := resp.Usage; u.PromptTokens < 1 || u.CompletionTokens < 1 || u.TotalTokens != u.PromptTokens+u.CompletionTokens || u.TotalTokens > 64 {
		t.Errorf("usage %+v", u)
	}
	// The answer names the model with its version, as the provider's
	// "GigaChat:1.0.26.20" does.
	if !strings.HasPrefix(resp.Model, "stories260K:") || resp.Object != "chat.completion" || resp.Created == 0 {
		t.Errorf("model %q object %q created %d", resp.Model, resp.Object, resp.Created)
	}

	// Greedy and bounded: the same request twice says the same, and a
	// system instruction goes through the model's template.
	model.MaxTokens = 8
	model.SystemInstruction = "Lily and Tom went to the park."
	first, err := model.Generate(ctx, []gigago.Message{{Role: gigago.RoleUser, Content: "Once upon a time"}})
	if err != nil {
		t.Fatal(err)
	}
	again, err := model.Generate(ctx, []gigago.Message{{Role: gigago.RoleUser, Content: "Once upon a time"}})
	if err != nil {
		t.Fatal(err)
	}
	if first.Choices[0].Message.Content != again.Choices[0].Message.Content || first.Usage.CompletionTokens > 8 {
		t.Errorf("greedy answers %q and %q, completion tokens %d", first.Choices[0].Message.Content, again.Choices[0].Message.Content, first.Usage.CompletionTokens)
	}

	// An unknown model is the provider's 404, which the SDK reports.
	if _, err := client.GenerativeModel("no-such-model").Generate(ctx, []gigago.Message{{Role: gigago.RoleUser, Content: "Hi"}}); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("unknown model: %v", err)
	}
}
