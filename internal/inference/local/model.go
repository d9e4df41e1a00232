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
	// Template renders chat messages; the plain-text fallback when the file
	// carries no tokenizer.chat_template.
	Template *chattemplate.Template
	// TemplateFallback reports that the file's chat template could not be
	// parsed and a built-in format (chosen by its marker strings) or the
	// plain-text format is used instead; worth a log line at start-up.
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
	tmpl, fallback := chattemplate.ForModel(src)
	return &Model{File: f, Net: net, Tokenizer: tok, Template: tmpl, TemplateFallback: fallback}, nil
}

// Close releases the mapping.
func (m *Model) Close() error { return m.File.Close() }
