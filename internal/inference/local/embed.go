package local

import (
	"context"
	"errors"
	"fmt"

	"partnerapi/internal/assistant"
	"partnerapi/internal/inference/model"
)

var _ assistant.Embedder = (*Engine)(nil)

// Embed implements assistant.Embedder for a model whose manifest says
// "type": "embedder": each input is tokenized as llama.cpp tokenizes a
// prompt (BOS, and EOS when the file asks for it, added; control-token
// spellings in the text stay text), run through the model and pooled as
// the file's {arch}.pooling_type says (mean when it has none), then
// L2-normalised. PromptTokens is the count of those tokens.
//
// Embeddings run outside the model's chat scheduler: an embedding needs
// one forward pass and no decode steps, so there is nothing to batch it
// with, and a sequence of its own per input means it shares nothing
// mutable with the scheduler's sequences (the weights are read-only). It
// does take one of the model's slots for the whole call, so that the
// model's Concurrency and QueueDepth bound embedding work as they bound
// chat. Every input is tokenized and checked against the context window
// before any runs, so an oversized input fails the call at once; ctx is
// checked between inputs and between prefill chunks.
func (e *Engine) Embed(ctx context.Context, name string, inputs []string) ([]assistant.Embedding, error) {
	s, ok := e.models[name]
	if !ok {
		return nil, assistant.ErrNoSuchModel
	}
	if s.info.Type != assistant.TypeEmbedder {
		return nil, assistant.ErrNotEmbedder
	}
	pool, err := model.PoolingOf(s.File)
	if err != nil {
		return nil, errors.Join(assistant.ErrNotEmbedder, err)
	}
	ids := make([][]int, len(inputs))
	for i, text := range inputs {
		ids[i] = s.Tokenizer.Encode(text, true, false)
		if len(ids[i]) == 0 {
			return nil, &assistant.InvalidParams{Status: 400, Message: fmt.Sprintf("input %d has no tokens", i)}
		}
		if len(ids[i]) > s.info.ContextWindow {
			return nil, fmt.Errorf("%w: input %d has %d tokens, the window %d", assistant.ErrContextWindow, i, len(ids[i]), s.info.ContextWindow)
		}
	}
	release, err := s.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	out := make([]assistant.Embedding, len(inputs))
	for i, toks := range ids {
		vec, err := s.Net.Embed(ctx, toks, pool)
		if errors.Is(err, model.ErrContextFull) {
			return nil, fmt.Errorf("%w: %v", assistant.ErrContextWindow, err)
		}
		if err != nil {
			return nil, err
		}
		out[i] = assistant.Embedding{Vector: vec, PromptTokens: len(toks)}
	}
	return out, nil
}
