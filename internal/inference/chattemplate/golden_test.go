package chattemplate

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// goldenCase is one entry of testdata/cases.json, the input both this test
// and testdata/hf_render.py (Jinja2 configured as Hugging Face's
// apply_chat_template) render.
type goldenCase struct {
	Name     string `json:"name"`
	Template string `json:"template"`
	BOS      string `json:"bos"`
	EOS      string `json:"eos"`
	GenOpen  bool   `json:"add_generation_prompt"`
	Messages []struct {
		Role     string `json:"role"`
		Content  string `json:"content"`
		Name     string `json:"name"`
		ToolCall *struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"tool_call"`
	} `json:"messages"`
	Tools []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"tools"`
}

// TestHFGolden renders every case of testdata/cases.json with gonja and
// compares it with the text Jinja2 rendered in Hugging Face's configuration
// (testdata/golden/NAME.txt); a template's raise_exception is stored as
// "raise_exception: MESSAGE".
func TestHFGolden(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []goldenCase
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join("testdata", tc.Template))
			if err != nil {
				t.Fatal(err)
			}
			tpl, err := Parse(string(src))
			if err != nil {
				t.Fatal(err)
			}
			msgs := make([]Message, len(tc.Messages))
			for i, m := range tc.Messages {
				msgs[i] = Message{Role: m.Role, Content: m.Content, Name: m.Name}
				if m.ToolCall != nil {
					msgs[i].ToolCall = &ToolCall{Name: m.ToolCall.Name, Arguments: m.ToolCall.Arguments}
				}
			}
			opts := Options{BOSToken: tc.BOS, EOSToken: tc.EOS, AddGenerationPrompt: tc.GenOpen}
			for _, tool := range tc.Tools {
				opts.Tools = append(opts.Tools, Tool{Name: tool.Name, Description: tool.Description, Parameters: tool.Parameters})
			}
			got, err := tpl.Render(msgs, opts)
			if raised := (*RaisedError)(nil); errors.As(err, &raised) {
				got, err = "raise_exception: "+raised.Message, nil
			}
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "golden", tc.Name+".txt")
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run testdata/hf_render.py)", err)
			}
			if got != string(want) {
				t.Errorf("got  %q\nwant %q", got, want)
			}
		})
	}
}
