package main

import (
	"testing"
	"time"
	"unicode/utf8"
)

// TestNpmClientFiles runs the official npm `gigachat` client's file
// operations, unmodified, against a live server (reference §3.9): its
// multipart upload, the list, one file, the raw bytes, a chat attaching the
// uploaded text, its aiCheck, the delete and the 404 after it.
func TestNpmClientFiles(t *testing.T) {
	node, pkg := npmClient(t, "the npm gigachat files test")
	data := t.TempDir()
	creds, err := createAssistantClient(t, data, "--scope", "ASSISTANT_API_CORP")
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, "--data-dir", data, "--models-dir", assistantModelsDir(t), "--only", "assistant")
	base := ts.urls["assistant"]
	out, err := runClientScript(node, pkg, "files.js", 2*time.Minute, base, creds["authorization_key"], "ASSISTANT_API_CORP", "stories260K")
	var res struct {
		Upload struct {
			Object, Filename, Purpose, ID string
			Bytes                         int
		}
		Image struct {
			Bytes   int
			Purpose string
		}
		List    [][]string
		One     string
		Content string
		Chat    struct {
			Finish       string
			PromptTokens int `json:"prompt_tokens"`
		}
		PlainPromptTokens int `json:"plain_prompt_tokens"`
		Deleted           struct {
			ID      string
			Deleted bool
		}
		AfterDelete any    `json:"after_delete"`
		AIHuman     string `json:"ai_human"`
		AIText      string `json:"ai_text"`
		AI          struct {
			Category    string
			Characters  int
			Tokens      int
			AIIntervals [][]int `json:"ai_intervals"`
		}
	}
	npmResult(t, out, err, &res)
	if res.Upload.Object != "file" || res.Upload.Filename != "notes.txt" || res.Upload.Bytes != len("Lily had a red ball.") || res.Upload.Purpose != "general" {
		t.Errorf("upload %+v", res.Upload)
	}
	if res.Image.Bytes != 7 || res.Image.Purpose != "assistant" {
		t.Errorf("image %+v", res.Image)
	}
	if len(res.List) != 2 || res.List[0][0] != "notes.txt" || res.List[1][0] != "pic.png" || res.List[0][1] != "private" || res.One != "notes.txt" {
		t.Errorf("list %v, one %q", res.List, res.One)
	}
	// The bytes come back exactly, NUL and 0xff included.
	if res.Content != "89504e4700ff10" {
		t.Errorf("content %s", res.Content)
	}
	// The attached text went into the prompt: more prompt tokens than the
	// same message without it.
	if res.Chat.Finish == "" || res.Chat.PromptTokens <= res.PlainPromptTokens || res.PlainPromptTokens == 0 {
		t.Errorf("chat %+v, plain prompt %d", res.Chat, res.PlainPromptTokens)
	}
	// The model's own continuation is found after the person's sentence.
	n, h := utf8.RuneCountInString(res.AIText), utf8.RuneCountInString(res.AIHuman)
	t.Logf("ai check %+v, the first %d characters a person's", res.AI, utf8.RuneCountInString(res.AIHuman))
	if iv := res.AI.AIIntervals; res.AI.Category != "mixed" || res.AI.Characters != n || res.AI.Tokens < 10 || len(iv) != 1 ||
		iv[0][0] < h/2 || iv[0][0] > h+30 || iv[0][1] != n {
		t.Errorf("ai check %+v of %d characters, the first %d a person's", res.AI, n, h)
	}
	if res.Deleted.ID != res.Upload.ID || !res.Deleted.Deleted || res.AfterDelete != float64(404) {
		t.Errorf("delete %+v, then %v", res.Deleted, res.AfterDelete)
	}
}
