package chatapi

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"partnerapi/internal/assistant"
	"partnerapi/internal/inference/local"
	"partnerapi/internal/testenv"
)

// TestTemplateRefusal checks that a conversation the model's chat template
// refuses (a template raising, as Llama 2's and Mistral's do, when roles do
// not alternate) is answered 422 "Invalid params" with the template's
// message, before any stream starts: a 500 would make SDKs retry a request
// that can never succeed.
func TestTemplateRefusal(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink(testenv.Model(t, "stories260K.gguf"), filepath.Join(dir, "stories260K.gguf")); err != nil {
		t.Fatal(err)
	}
	tpl := `{{ bos_token }}{% for m in messages %}{% if (m['role'] == 'user') != (loop.index0 % 2 == 0) %}` +
		`{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{{ m['content'] }}{% endfor %}`
	manifest, _ := json.Marshal(local.Manifest{ChatTemplate: tpl, ContextWindow: 256})
	if err := os.WriteFile(filepath.Join(dir, "stories260K.json"), manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	eng, err := local.Open(dir, local.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	f := newFixtureWith(t, eng)
	tok := f.token(f.client(assistant.ScopeCorp), "ASSISTANT_API_CORP")
	const want = `{"status":422,"message":"Invalid params: Conversation roles must alternate user/assistant/user/assistant/..."}`
	twoUsers := `"messages":[{"role":"user","content":"Once"},{"role":"user","content":"upon"}]`
	for _, body := range []string{
		`{"model":"stories260K",` + twoUsers + `}`,
		`{"model":"stories260K","stream":true,` + twoUsers + `}`,
	} {
		resp, got := f.call("POST", "/api/v1/chat/completions", tok, body)
		if resp.StatusCode != 422 || strings.TrimSpace(string(got)) != want {
			t.Errorf("%s: got %d %s, want 422 %s", body, resp.StatusCode, got, want)
		}
	}
	resp, got := f.call("POST", "/api/v1/chat/completions", tok, `{"model":"stories260K","max_tokens":3,"messages":[{"role":"user","content":"Once upon a time"}]}`)
	if resp.StatusCode != 200 {
		t.Errorf("a conversation the template accepts: %d %s", resp.StatusCode, got)
	}
}
