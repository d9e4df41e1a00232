package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestAssistantReadmeClientSteps follows the README's steps for pointing a
// real client at the assistant: it creates the client with the scope the
// README names and asks for a token with the scope the README configures
// the npm client with, or the npm client's own default (GIGACHAT_API_PERS)
// when it configures none. The steps must work as written.
func TestAssistantReadmeClientSteps(t *testing.T) {
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	start := strings.Index(readme, "- **Assistant**")
	end := strings.Index(readme[max(start, 0):], "- **Smart home**")
	if start < 0 || end < 0 {
		t.Fatal("README: no Assistant item under \"Pointing a real client at it\"")
	}
	steps := readme[start : start+end]
	create := regexp.MustCompile("assistant client create --scope ([A-Z_]+)").FindStringSubmatch(steps)
	if create == nil {
		t.Fatal("README: the Assistant steps create no client")
	}
	scope := "GIGACHAT_API_PERS" // the npm client's default
	if m := regexp.MustCompile(`scope: "([A-Z_]+)"`).FindStringSubmatch(steps); m != nil {
		scope = m[1]
	}
	data := t.TempDir()
	creds, err := createAssistantClient(t, data, "--scope", create[1])
	if err != nil {
		t.Fatal(err)
	}
	base := startServer(t, "--data-dir", data, "--only", "assistant").urls["assistant"]
	if assistantToken(t, base, scope, creds["authorization_key"]) == "" {
		t.Fatalf("a client created with %s got no token for the npm client's scope %s", create[1], scope)
	}
}
