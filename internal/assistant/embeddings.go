package assistant

import (
	"context"
	"errors"
)

// DefaultEmbeddingsModel is the model the npm client asks for by default.
const DefaultEmbeddingsModel = "Embeddings"

// Embeddings is the outcome of Embed: the model used and one vector per
// input, in input order.
type Embeddings struct {
	Model ModelInfo
	Items []Embedding
}

// PrepareEmbed validates an embeddings request and checks the client's
// funds, so that every refusal happens before the engine runs.
func (s *Service) PrepareEmbed(ctx context.Context, p Principal, model string, inputs []string) (ModelInfo, error) {
	if len(inputs) == 0 {
		return ModelInfo{}, badRequest("input must not be empty")
	}
	if model == "" {
		model = DefaultEmbeddingsModel
	}
	m, err := s.ResolveModel(ctx, model)
	if err != nil {
		return ModelInfo{}, err
	}
	if _, ok := s.engine.(Embedder); !ok || m.Type != TypeEmbedder {
		return ModelInfo{}, ErrNotEmbedder
	}
	return m, s.checkFunds(ctx, p, m.Name)
}

// Embed embeds every input with a prepared model and bills the tokens used
// as prompt tokens, as chat bills its prompt.
func (s *Service) Embed(ctx context.Context, p Principal, m ModelInfo, inputs []string) (Embeddings, error) {
	e, ok := s.engine.(Embedder)
	if !ok {
		return Embeddings{}, ErrNotEmbedder
	}
	items, err := e.Embed(ctx, m.Name, inputs)
	if err != nil {
		return Embeddings{}, err
	}
	if len(items) != len(inputs) {
		return Embeddings{}, errors.New("embedder returned a vector count different from the input count")
	}
	var used Usage
	for _, it := range items {
		used.PromptTokens += it.PromptTokens
	}
	if err := s.bill(context.WithoutCancel(ctx), p, m.Name, used); err != nil {
		return Embeddings{}, errors.Join(errors.New("billing failed"), err)
	}
	return Embeddings{Model: m, Items: items}, nil
}
