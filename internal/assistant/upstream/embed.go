package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"partnerapi/internal/assistant"
)

// Embed implements assistant.Embedder with POST /v1/embeddings. Each input
// is its own request: the OpenAI format reports usage only for the whole
// batch, and this API reports (and bills) it per input, exactly.
func (e *Engine) Embed(ctx context.Context, model string, inputs []string) ([]assistant.Embedding, error) {
	if e.served[model].Type != assistant.TypeEmbedder {
		return nil, assistant.ErrNotEmbedder
	}
	out := make([]assistant.Embedding, 0, len(inputs))
	for _, in := range inputs {
		emb, err := e.embedOne(ctx, model, in)
		if err != nil {
			return nil, err
		}
		out = append(out, emb)
	}
	return out, nil
}

func (e *Engine) embedOne(ctx context.Context, model, input string) (assistant.Embedding, error) {
	resp, err := e.do(ctx, http.MethodPost, "/v1/embeddings", map[string]any{"model": e.remote(model), "input": input})
	if err != nil {
		if ctx.Err() != nil {
			return assistant.Embedding{}, ctx.Err()
		}
		return assistant.Embedding{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return assistant.Embedding{}, upstreamError(resp)
	}
	var body struct {
		Data []struct {
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
		Usage *struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return assistant.Embedding{}, fmt.Errorf("upstream: embeddings: %w", err)
	}
	if len(body.Data) != 1 || len(body.Data[0].Embedding) == 0 {
		return assistant.Embedding{}, fmt.Errorf("upstream: embeddings: want one vector, got %d", len(body.Data))
	}
	tokens := 0
	if body.Usage != nil {
		// A negative count, billed as it is, would credit the client's
		// balance; it is no count, as a chat's usage is read.
		tokens = max(body.Usage.PromptTokens, 0)
	}
	if tokens == 0 {
		// Ollama's OpenAI layer reports no usage; count as CountTokens does.
		if tokens, err = e.CountTokens(ctx, model, input); err != nil {
			return assistant.Embedding{}, err
		}
	}
	return assistant.Embedding{Vector: body.Data[0].Embedding, PromptTokens: tokens}, nil
}
