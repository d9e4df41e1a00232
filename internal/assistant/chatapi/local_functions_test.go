package chatapi

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"partnerapi/internal/assistant"
	"partnerapi/internal/inference/local"
	"partnerapi/internal/testenv"
)

// TestLocalModelFunctions runs the in-process engine with stories260K and
// a manifest that declares function support. The model is far too small to
// call a function, so this checks the wiring honestly: the functions are
// accepted, rendered into the prompt (it grows by the tools section) and
// the reply, which holds no <tool_call>, comes back as ordinary text.
func TestLocalModelFunctions(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink(testenv.Model(t, "stories260K.gguf"), filepath.Join(dir, "stories260K.gguf")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "stories260K.json"), []byte(`{"supports_functions":true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	eng, err := local.Open(dir, local.Options{MaxContext: 2048})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	f := newFixtureWith(t, eng)
	tok := f.token(f.client(assistant.ScopeCorp), "ASSISTANT_API_CORP")
	chat := func(extra string) (int, string) {
		t.Helper()
		resp, body := f.call("POST", "/api/v1/chat/completions", tok,
			`{"model":"stories260K","messages":[{"role":"user","content":"Once upon a time"}],"temperature":0,"max_tokens":4`+extra+`}`)
		if resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
		var out struct {
			Choices []struct {
				Message struct {
					FunctionCall json.RawMessage `json:"function_call"`
				} `json:"message"`
				FinishReason string `json:"finish_reason"`
			} `json:"choices"`
			Usage struct {
				PromptTokens          int `json:"prompt_tokens"`
				PrecachedPromptTokens int `json:"precached_prompt_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal(body, &out); err != nil {
			t.Fatal(err)
		}
		if out.Choices[0].Message.FunctionCall != nil {
			t.Fatalf("stories260K made a function call: %s", body)
		}
		// The whole prompt: prompt_tokens leaves out what the prefix
		// cache reused, which the earlier requests make vary.
		return out.Usage.PromptTokens + out.Usage.PrecachedPromptTokens, out.Choices[0].FinishReason
	}
	plain, _ := chat("")
	withTools, finish := chat(`,"functions":[{"name":"weather_forecast","description":"Weather forecast","parameters":{"type":"object","properties":{"location":{"type":"string"}}}}]`)
	t.Logf("prompt tokens: %d without functions, %d with", plain, withTools)
	if withTools <= plain+20 || finish != "length" {
		t.Fatalf("prompt tokens %d without functions, %d with (the tools section must be rendered); finish %q", plain, withTools, finish)
	}
	// function_call "none" hides the functions from the model.
	if none, _ := chat(`,"functions":[{"name":"f","parameters":{"type":"object"}}],"function_call":"none"`); none != plain {
		t.Fatalf("function_call none: %d prompt tokens, want %d", none, plain)
	}
}
