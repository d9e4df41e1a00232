package chattemplate

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"partnerapi/internal/inference/gguf"
	"partnerapi/internal/testenv"
)

var conversation = []Message{
	{Role: "system", Content: "Be brief."},
	{Role: "user", Content: "Hi there"},
	{Role: "assistant", Content: "Hello!"},
	{Role: "user", Content: "  How are you?  "},
}

func TestPhi3TemplateFromGGUF(t *testing.T) {
	f, err := gguf.Open(testenv.Model(t, "vocab/ggml-vocab-phi-3.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	src, ok := f.String("tokenizer.chat_template")
	if !ok {
		t.Fatal("no chat template")
	}
	tpl, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	got, err := tpl.Render(conversation, Options{BOSToken: "<s>", EOSToken: "<|endoftext|>", AddGenerationPrompt: true})
	if err != nil {
		t.Fatal(err)
	}
	// Phi-3's template drops system messages and opens the assistant turn
	// after every user message.
	want := "<s><|user|>\nHi there<|end|>\n<|assistant|>\nHello!<|end|>\n<|user|>\n  How are you?  <|end|>\n<|assistant|>\n"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// A Llama-2/Mistral-style template exercising the constructs real templates
// use: messages[0]['role'], slicing, set, loop.index0, raise_exception,
// trim / .strip(), bos/eos tokens, add_generation_prompt.
const llama2Like = `{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set system_message = messages[0]['content'] %}{% else %}{% set loop_messages = messages %}{% set system_message = false %}{% endif %}` +
	`{% for message in loop_messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}` +
	`{% if loop.index0 == 0 and system_message != false %}{% set content = '<<SYS>>\n' + system_message + '\n<</SYS>>\n\n' + message['content'] %}{% else %}{% set content = message['content'] %}{% endif %}` +
	`{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content | trim + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ ' ' + content.strip() + ' ' + eos_token }}{% endif %}{% endfor %}` +
	`{% if add_generation_prompt %}{{ '' }}{% endif %}`

const chatML = `{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}`

func TestTemplates(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		msgs    []Message
		genOpen bool
		want    string
		wantErr bool
	}{
		{name: "llama2 with system", src: llama2Like, msgs: conversation, genOpen: true,
			want: "<s>[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi there [/INST] Hello! </s><s>[INST] How are you? [/INST]"},
		{name: "llama2 without system", src: llama2Like, msgs: conversation[1:2], genOpen: true,
			want: "<s>[INST] Hi there [/INST]"},
		{name: "llama2 roles must alternate", src: llama2Like, msgs: []Message{{Role: "user", Content: "a"}, {Role: "user", Content: "b"}}, wantErr: true},
		{name: "chatml with generation prompt", src: chatML, msgs: conversation[:2], genOpen: true,
			want: "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n"},
		{name: "chatml without generation prompt", src: chatML, msgs: conversation[1:2], genOpen: false,
			want: "<|im_start|>user\nHi there<|im_end|>\n"},
		{name: "name field", src: `{% for m in messages %}{{ m.role }}:{{ m.name }};{% endfor %}`, msgs: []Message{{Role: "function", Name: "weather", Content: "{}"}},
			want: "function:weather;"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tpl, err := Parse(tc.src)
			if err != nil {
				t.Fatal(err)
			}
			got, err := tpl.Render(tc.msgs, Options{BOSToken: "<s>", EOSToken: "</s>", AddGenerationPrompt: tc.genOpen})
			if tc.wantErr {
				if !errors.Is(err, ErrTemplate) || !strings.Contains(err.Error(), "alternate") {
					t.Fatalf("want a raised template error, got %v (output %q)", err, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestParseRefusesBrokenTemplate(t *testing.T) {
	if _, err := Parse("{% for m in messages %}{{ m.content }"); !errors.Is(err, ErrTemplate) {
		t.Fatalf("got %v", err)
	}
}

func TestPlainTextFallback(t *testing.T) {
	got, err := PlainText().Render(conversation, Options{BOSToken: "<s>", AddGenerationPrompt: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := "Be brief.\n\nHi there\n\nHello!\n\nHow are you?"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, _ := PlainText().Render([]Message{{Role: "user", Content: "Once upon a time"}}, Options{}); got != "Once upon a time" {
		t.Errorf("single message rendered as %q", got)
	}
}

// FuzzTemplate checks that no template text makes Parse or Render panic.
func FuzzTemplate(f *testing.F) {
	f.Add(llama2Like)
	f.Add(chatML)
	f.Add("{{ messages[1:][0]['content'].strip() }}{% if x %}")
	f.Fuzz(func(t *testing.T, src string) {
		tpl, err := Parse(src)
		if err != nil {
			return
		}
		_, _ = tpl.Render(conversation, Options{BOSToken: "<s>", AddGenerationPrompt: true})
	})
}

// Real templates shipped in popular GGUF files (testdata/*.jinja), rendered
// to the prompt formats inference.md §5.3 documents.
func TestRealTemplates(t *testing.T) {
	tests := []struct {
		file string
		msgs []Message
		want string
	}{
		{"qwen2.5.jinja", conversation[:2],
			"<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n"},
		{"qwen2.5.jinja", conversation[1:2],
			"<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n"},
		{"llama3.jinja", conversation[:2],
			"<s><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi there<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			tpl, err := Parse(strings.TrimSuffix(string(src), "\n"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := tpl.Render(tc.msgs, Options{BOSToken: "<s>", AddGenerationPrompt: true})
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestForModelFallsBackByMarker(t *testing.T) {
	two := conversation[:2]
	tests := []struct {
		name, source string
		fallback     bool
		want         string
	}{
		{"no template", "", false, "Be brief.\n\nHi there"},
		{"parsable template is used as is", chatML, false,
			"<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n"},
		{"broken chatml", "{% broken <|im_start|>", true,
			"<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n"},
		{"broken llama3", "{% broken <|start_header_id|>", true,
			"<s><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi there<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"},
		{"broken phi3", "{% broken <|assistant|>", true,
			"<s><|system|>\nBe brief.<|end|>\n<|user|>\nHi there<|end|>\n<|assistant|>\n"},
		{"broken llama2", "{% broken [INST]", true,
			"<s>[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi there [/INST]"},
		{"broken unknown", "{% broken", true, "Be brief.\n\nHi there"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tpl, fallback := ForModel(tc.source)
			if fallback != tc.fallback {
				t.Errorf("fallback %v", fallback)
			}
			got, err := tpl.Render(two, Options{BOSToken: "<s>", EOSToken: "</s>", AddGenerationPrompt: true})
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestForModelFallsBackAtRender checks a model template that parses but
// uses what the Jinja library lacks: it renders in the built-in format its
// markers identify, while the template's own raise_exception stays an error.
func TestForModelFallsBackAtRender(t *testing.T) {
	const unsupported = `{% for m in messages %}<|im_start|>{{ m.role }}{{ m.content.no_such_method() }}{% endfor %}`
	tests := []struct {
		name, source string
		msgs         []Message
		want         string
		wantRaised   string
	}{
		{"unsupported method, chatml markers", unsupported, conversation[:2],
			"<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n", ""},
		{"unsupported method, no markers", `{{ messages[0].content.no_such_method() }}`, conversation[:2], "Be brief.\n\nHi there", ""},
		{"raise_exception is not a fallback", `<|im_start|>{{ raise_exception('no system messages') }}`, conversation[:2], "", "no system messages"},
		{"working template is used", `<|im_start|>{{ messages[1].content }}`, conversation[:2], "<|im_start|>Hi there", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tpl, fallback := ForModel(tc.source)
			if fallback {
				t.Fatal("a parsable template is reported as replaced")
			}
			got, err := tpl.Render(tc.msgs, Options{BOSToken: "<s>", AddGenerationPrompt: true})
			if tc.wantRaised != "" {
				var raised *RaisedError
				if !errors.As(err, &raised) || raised.Message != tc.wantRaised {
					t.Fatalf("got %q, %v; want the raised %q", got, err, tc.wantRaised)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestToolsAndToolCalls(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "qwen2.5.jinja"))
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := Parse(string(src))
	if err != nil {
		t.Fatal(err)
	}
	msgs := []Message{
		{Role: "user", Content: "Weather in Oslo?"},
		{Role: "assistant", ToolCall: &ToolCall{Name: "get_weather", Arguments: []byte(`{"city":"Oslo"}`)}},
		{Role: "tool", Content: `{"temp":3}`},
	}
	got, err := tpl.Render(msgs, Options{AddGenerationPrompt: true, Tools: []Tool{{
		Name: "get_weather", Description: "Current weather", Parameters: []byte(`{"type":"object","properties":{"city":{"type":"string"}}}`),
	}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("rendered:\n%s", got)
	for _, want := range []string{
		"# Tools", "<tools>\n{", `"name":`, `get_weather`, `Current weather`, "</tools>",
		"<|im_start|>assistant\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {", `Oslo`,
		"<|im_start|>user\n<tool_response>\n{\"temp\":3}\n</tool_response><|im_end|>\n<|im_start|>assistant\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("rendered prompt lacks %q:\n%s", want, got)
		}
	}
}

// TestDropsSystem checks which templates leave a system message out of the
// prompt without refusing it: Phi-3's own (the fixture's) does, templates
// that write it (even into the last user turn, as Mistral v0.3's) or
// refuse it (Mistral v0.1's, whose refusal the caller handles) do not.
func TestDropsSystem(t *testing.T) {
	f, err := gguf.Open(testenv.Model(t, "vocab/ggml-vocab-phi-3.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	phi3, _ := f.String("tokenizer.chat_template")
	file := func(name string) string {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	tests := []struct {
		name, source string
		want         bool
	}{
		{"phi-3", phi3, true},
		{"plain text", "", false},
		{"chatml", chatML, false},
		{"llama-2 style", llama2Like, false},
		{"qwen2.5", file("qwen2.5.jinja"), false},
		{"llama3", file("llama3.jinja"), false},
		{"zephyr", file("zephyr.jinja"), false},
		{"mistral v0.3", file("mistral-v0.3.jinja"), false},
		{"mistral v0.1 refuses", file("mistral-v0.1.jinja"), false},
		{"system re-cased", `{% for m in messages %}{{ m.role }}:{{ m.content | upper }};{% endfor %}`, false},
		{"user turns only", `{% for m in messages %}{% if m.role == 'user' %}U:{{ m.content }};{% endif %}{% endfor %}`, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tpl, _ := ForModel(tc.source)
			if got := tpl.DropsSystem(); got != tc.want {
				t.Errorf("DropsSystem = %v, want %v", got, tc.want)
			}
		})
	}
}
