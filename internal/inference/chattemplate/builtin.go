package chattemplate

import "strings"

// Built-in templates for the common prompt formats (inference.md §5.3),
// used when a model's own template cannot be parsed. Which one applies is
// decided by marker strings in the model's template, as llama.cpp does.
var builtins = []struct {
	marker string
	source string
}{
	{"<|im_start|>", `{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}`},
	{"<|start_header_id|>", `{% for message in messages %}{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}`},
	{"<|assistant|>", `{{ bos_token }}{% for message in messages %}{% if message['role'] == 'system' %}{{'<|system|>\n' + message['content'] + '<|end|>\n'}}{% elif message['role'] == 'user' %}{{'<|user|>\n' + message['content'] + '<|end|>\n'}}{% else %}{{'<|assistant|>\n' + message['content'] + '<|end|>\n'}}{% endif %}{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% endif %}`},
	{"[INST]", `{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set system_message = messages[0]['content'] %}{% else %}{% set loop_messages = messages %}{% set system_message = false %}{% endif %}{% for message in loop_messages %}{% if loop.index0 == 0 and system_message != false %}{% set content = '<<SYS>>\n' + system_message + '\n<</SYS>>\n\n' + message['content'] %}{% else %}{% set content = message['content'] %}{% endif %}{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content | trim + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ ' ' + content | trim + ' ' + eos_token }}{% endif %}{% endfor %}`},
}

// ChatML returns the built-in ChatML format (Qwen's), the usual choice for a
// chat model whose file carries no usable template (llama.cpp's default).
func ChatML() *Template {
	t, err := Parse(builtins[0].source)
	if err != nil {
		panic("chattemplate: the built-in ChatML template does not parse: " + err.Error())
	}
	return t
}

// ForModel returns the template for a model's tokenizer.chat_template: the
// template itself when it parses, else the built-in format its marker
// strings identify, else (and for an empty source) the plain-text fallback.
// fallback reports that the model's own template is not the one used, which
// callers should log.
//
// A template that parses may still use a feature the Jinja library lacks,
// which shows only when it renders: Render then falls back to the same
// built-in format, with a warning logged, rather than failing every request
// on a model's template the client cannot change. The template's own
// raise_exception is no such failure and stays the caller's error.
func ForModel(source string) (t *Template, fallback bool) {
	if source == "" {
		return PlainText(), false
	}
	if t, err := Parse(source); err == nil {
		t.fallback = builtinFor(source)
		return t, false
	}
	return builtinFor(source), true
}

// builtinFor is the built-in format source's marker strings identify, else
// the plain-text fallback.
func builtinFor(source string) *Template {
	for _, b := range builtins {
		if strings.Contains(source, b.marker) {
			if t, err := Parse(b.source); err == nil {
				return t
			}
		}
	}
	return PlainText()
}
