package main

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"partnerapi/internal/inference/local"
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
	base := startServer(t, "--data-dir", data, "--only", "assistant", "--models-dir", assistantModelsDir(t)).urls["assistant"]
	token := assistantToken(t, base, scope, creds["authorization_key"])
	if token == "" {
		t.Fatalf("a client created with %s got no token for the npm client's scope %s", create[1], scope)
	}
	// The npm client asks for GigaChat unless configured with a model,
	// and no model of the README's models directory has that name.
	model := regexp.MustCompile(`model: "([^"]+)"`).FindStringSubmatch(steps)
	if model == nil {
		t.Fatal("README: the Assistant steps configure the npm client with no model")
	}
	req, err := http.NewRequest("POST", base+"/api/v1/chat/completions", strings.NewReader(
		`{"model":"`+model[1]+`","messages":[{"role":"user","content":"Once upon a time"}],"max_tokens":4}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("chat with the README's model %q: %d %s", model[1], resp.StatusCode, body)
	}
}

// The README's step that puts a model into ./models runs as written in a
// fresh clone, which has no models directory, and leaves the model where
// serve's default --models-dir looks; .gitignore keeps that directory, like
// ./data, out of the repository, so a pulled model is never committed.
func TestReadmeModelStepRunsInAFreshClone(t *testing.T) {
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	step := regexp.MustCompile("`([^`]*cp \\.\\./shared/models/stories260K\\.gguf [^`]*)`").FindStringSubmatch(string(raw))
	if step == nil {
		t.Fatal("README: the Assistant steps do not copy stories260K.gguf from ../shared/models")
	}
	root := t.TempDir()
	clone, shared := filepath.Join(root, "main"), filepath.Join(root, "shared", "models")
	for _, d := range []string{clone, shared} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(shared, "stories260K.gguf"), []byte("GGUF"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", step[1])
	cmd.Dir = clone
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("README step %q in a fresh clone: %v: %s", step[1], err, out)
	}
	var cfg serveConfig
	dir := serveFlags(&cfg, modules()).Lookup("models-dir").DefValue
	if _, err := os.Stat(filepath.Join(clone, dir, "stories260K.gguf")); err != nil {
		t.Errorf("README step %q: the model is not in serve's default --models-dir %s: %v", step[1], dir, err)
	}
	ignore, err := os.ReadFile("../../.gitignore")
	if err != nil {
		t.Fatal(err)
	}
	want := "/" + strings.Trim(filepath.ToSlash(filepath.Clean(dir)), "/") + "/"
	if !slices.Contains(strings.Split(string(ignore), "\n"), want) {
		t.Errorf(".gitignore lacks %s, the default models directory the README fills", want)
	}
}

// The README's --models-dir row names every key of a model's NAME.json
// manifest, so that a developer can set what the engine reads (a version
// for the model's id, a context cap, an embedder's type) without reading
// its source.
func TestReadmeNamesEveryManifestKey(t *testing.T) {
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `--models-dir` \\|.*$").FindString(string(raw))
	if row == "" {
		t.Fatal("README: no --models-dir row in the flags table")
	}
	typ := reflect.TypeFor[local.Manifest]()
	for i := range typ.NumField() {
		key, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if !strings.Contains(row, "`"+key+"`") {
			t.Errorf("README's --models-dir row does not name the manifest key %q", key)
		}
	}
}
