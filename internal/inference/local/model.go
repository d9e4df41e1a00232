// Package local is the in-process inference engine: it serves the GGUF
// models of a directory through the assistant.Engine interface, running the
// pure-Go forward pass of package model.
//
// Concurrent Generate calls on one model are continuously batched: a
// scheduler goroutine per model advances every active sequence (each choice
// of each request) with one batched forward step, lets new requests join at
// the next step (their prompts prefilled a chunk at a time inside the same
// steps, sharing their weight reads) and drops finished or cancelled ones
// at once. Finished prompts' KV caches are kept
// in a small LRU for prefix reuse. Engine.Stats reports the batch, the queue
// and the KV memory held.
package local

import (
	"fmt"

	"partnerapi/internal/inference/chattemplate"
	"partnerapi/internal/inference/gguf"
	"partnerapi/internal/inference/model"
	"partnerapi/internal/inference/tokenizer"
)

// Model is one loaded GGUF model: weights (mapped), tokenizer and template.
type Model struct {
	File      *gguf.File
	Net       *model.Model
	Tokenizer *tokenizer.Tokenizer
	// Template renders chat messages; when the file carries no usable
	// tokenizer.chat_template, ChatML for a vocabulary with its control
	// tokens, else the plain-text fallback (templateFor).
	Template *chattemplate.Template
	// TemplateFallback reports that the file's chat template could not be
	// parsed and a built-in format (chosen by its marker strings or the
	// vocabulary) or the plain-text format is used instead; worth a log
	// line at start-up.
	TemplateFallback bool
}

// LoadModel opens and loads the GGUF file at path. Files opened twice in one
// process share their memory mapping.
func LoadModel(path string) (*Model, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	m, err := loadFrom(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

func loadFrom(f *gguf.File) (*Model, error) {
	net, err := model.Load(f)
	if err != nil {
		return nil, err
	}
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		return nil, err
	}
	if tok.VocabSize() != net.NVocab {
		return nil, fmt.Errorf("local: tokenizer has %d tokens, the embedding table %d", tok.VocabSize(), net.NVocab)
	}
	src, _ := f.String("tokenizer.chat_template")
	tmpl, fallback := templateFor(src, tok)
	return &Model{File: f, Net: net, Tokenizer: tok, Template: tmpl, TemplateFallback: fallback}, nil
}

// Close releases the mapping.
func (m *Model) Close() error { return m.File.Close() }

// templateFor is the chat template of a model whose file carries src:
// chattemplate.ForModel's choice, except that a vocabulary with ChatML's
// control tokens gets ChatML instead of the plain-text format (no template,
// or one that neither parses nor names a known format), as llama.cpp does
// (inference.md §5.3): such a model was tuned on ChatML turns, and given its
// messages' bare contents it would only continue the text. A vocabulary
// without them (stories260K's) keeps the plain text, which a completion
// model continues.
func templateFor(src string, tok *tokenizer.Tokenizer) (*chattemplate.Template, bool) {
	tmpl, fallback := chattemplate.ForModel(src)
	if !tmpl.IsPlainText() {
		return tmpl, fallback
	}
	_, start := tok.Special("<|im_start|>")
	_, end := tok.Special("<|im_end|>")
	if start && end {
		return chattemplate.ChatML(), src != ""
	}
	return tmpl, fallback
}
