package local

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"partnerapi/internal/assistant"
	"partnerapi/internal/inference/chattemplate"
	"partnerapi/internal/inference/tokenizer"
)

// TestPromptRolesAndSystemMerge checks what local templates see: the
// provider's roles mapped as for an upstream (search_result is the user's,
// function_in_progress is dropped, function is tool), and a system message
// folded into the first user message for templates that refuse one or
// leave it out of the prompt (Phi-3's), whose instructions would otherwise
// be lost without a word.
func TestPromptRolesAndSystemMerge(t *testing.T) {
	mistral, err := os.ReadFile("../chattemplate/testdata/mistral-v0.1.jinja")
	if err != nil {
		t.Fatal(err)
	}
	// Phi-3's own template (the vocabulary fixture's) writes only user and
	// assistant turns.
	const phi3 = "{{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') %}{{'<|user|>' + '\\n' + message['content'] + '<|end|>' + '\\n' + '<|assistant|>' + '\\n'}}{% elif (message['role'] == 'assistant') %}{{message['content'] + '<|end|>' + '\\n'}}{% endif %}{% endfor %}"
	const echo = `{% for m in messages %}{{ m.role }}:{{ m.content }};{% endfor %}`
	msg := func(role, content string) assistant.Message { return assistant.Message{Role: role, Content: content} }
	tests := []struct {
		name     string
		template string
		msgs     []assistant.Message
		want     string // the prompt's text, without BOS
		wantErr  string // a TemplateError's reason
	}{
		{"provider roles", echo, []assistant.Message{msg("system", "S"), msg("user", "U"), msg("search_result", "R"),
			msg("assistant", "A"), msg("function_in_progress", "P"), msg("function", "F")},
			"system:S;user:U;user:R;assistant:A;tool:F;", ""},
		{"system refused, merged", string(mistral), []assistant.Message{msg("system", "Be brief."), msg("user", "Hi")},
			"[INST] Be brief.\n\nHi [/INST]", ""},
		{"system dropped, merged", phi3, []assistant.Message{msg("system", "Be brief."), msg("user", "Hi"), msg("assistant", "Hello!"), msg("user", "Bye")},
			"<|user|>\nBe brief.\n\nHi<|end|>\n<|assistant|>\nHello!<|end|>\n<|user|>\nBye<|end|>\n<|assistant|>\n", ""},
		{"system alone, dropped", phi3, []assistant.Message{msg("system", "Be brief.")}, "<|user|>\nBe brief.<|end|>\n<|assistant|>\n", ""},
		{"system kept where the template writes it", echo, []assistant.Message{msg("system", "S"), msg("user", "U")}, "system:S;user:U;", ""},
		{"system alone", string(mistral), []assistant.Message{msg("system", "Be brief.")}, "[INST] Be brief. [/INST]", ""},
		{"search result in a refusing template", string(mistral), []assistant.Message{msg("search_result", "R"), msg("function_in_progress", "P")},
			"[INST] R [/INST]", ""},
		{"roles still must alternate", string(mistral), []assistant.Message{msg("system", "Be brief."), msg("user", "a"), msg("user", "b")},
			"", "Conversation roles must alternate user/assistant/user/assistant/..."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			manifest, _ := json.Marshal(Manifest{ChatTemplate: tc.template})
			e := openEngine(t, string(manifest), Options{})
			s := e.models["stories260K"]
			ids, err := s.prompt(tc.msgs, nil)
			if tc.wantErr != "" {
				var te *assistant.TemplateError
				if !errors.As(err, &te) || te.Reason != tc.wantErr {
					t.Fatalf("got %v, want a TemplateError %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := s.Tokenizer.Decode(ids)
			if strings.TrimPrefix(got, "<s>") != tc.want {
				t.Errorf("prompt %q, want %q", got, tc.want)
			}
		})
	}
}

// TestTemplateForFallsBackToChatML checks the format of a model without a
// usable chat template: ChatML when its vocabulary has ChatML's control
// tokens (a chat model, reference §5.3), the plain text otherwise (a
// completion model such as stories260K); a template that works is kept.
func TestTemplateForFallsBackToChatML(t *testing.T) {
	vocab := func(chatML bool) *tokenizer.Tokenizer {
		v := tokenizer.Vocab{Kind: tokenizer.KindSPM, BOS: 1, EOS: 2, UNK: 0, AddBOS: true, AddSpacePrefix: true,
			Tokens: []string{"<unk>", "<s>", "</s>", "▁Hi"},
			Types:  []tokenizer.TokenType{tokenizer.TypeUnknown, tokenizer.TypeControl, tokenizer.TypeControl, tokenizer.TypeNormal}}
		if chatML {
			v.Tokens = append(v.Tokens, "<|im_start|>", "<|im_end|>")
			v.Types = append(v.Types, tokenizer.TypeControl, tokenizer.TypeControl)
		}
		tok, err := tokenizer.New(v)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	const chatMLPrompt = "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
	tests := []struct {
		name     string
		src      string
		chatML   bool
		want     string
		fallback bool
	}{
		{"no template, ChatML vocabulary", "", true, chatMLPrompt, false},
		{"broken unknown template, ChatML vocabulary", "{% broken", true, chatMLPrompt, true},
		{"no template, completion vocabulary", "", false, "Be brief.\n\nHi", false},
		{"broken unknown template, completion vocabulary", "{% broken", false, "Be brief.\n\nHi", true},
		{"a working template is kept", "{% for m in messages %}{{ m.role }}:{{ m.content }};{% endfor %}", true, "system:Be brief.;user:Hi;", false},
	}
	msgs := []chattemplate.Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Hi"}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tpl, fallback := templateFor(tc.src, vocab(tc.chatML))
			if fallback != tc.fallback {
				t.Errorf("fallback %v, want %v", fallback, tc.fallback)
			}
			got, err := tpl.Render(msgs, chattemplate.Options{AddGenerationPrompt: true})
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
