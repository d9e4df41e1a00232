package upstream

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// Counting a prompt's tokens with the upstream's own tokenizer, in the
// request shape of the kind of server behind the URL, or estimating them
// where it has none.

// CountTokens asks the upstream's POST /tokenize (llama-server and vLLM
// both have one, each with its own request shape: tokenize); upstreams
// without it (Ollama) get an estimate of one token per 4 bytes, rounded up,
// which is the usual ratio for English BPE vocabularies and only used for
// billing previews, never for the context check (the upstream does that
// itself).
func (e *Engine) CountTokens(ctx context.Context, model, text string) (int, error) {
	n, _, _ := e.tokenize(ctx, model, text)
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	return n, nil
}

// countTokens is CountTokens that reports an upstream it could not reach
// instead of estimating, so a pool can ask another replica.
func (e *Engine) countTokens(ctx context.Context, model, text string) (int, error) {
	n, _, err := e.tokenize(ctx, model, text)
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	return n, err
}

// counter is who counted a prompt's tokens: an estimate, or the upstream's
// own tokenizer asked in the request shape its /tokenize accepts.
type counter int

const (
	estimated counter = iota
	// llamaServer's /tokenize takes {"content", "add_special"}.
	llamaServer
	// vllm's /tokenize takes {"prompt", "add_special_tokens"}; recent vLLM
	// ignores fields it does not know but logs a warning for each request,
	// and older releases refuse them, so each kind gets only its own.
	vllm
)

// tokenizeBody is the /tokenize request of text in the shape by accepts;
// neither adds BOS, which the chat template's own tokens stand for.
func (e *Engine) tokenizeBody(by counter, model, text string) map[string]any {
	if by == vllm {
		return map[string]any{"model": e.remote(model), "prompt": text, "add_special_tokens": false}
	}
	return map[string]any{"model": e.remote(model), "content": text, "add_special": false}
}

// tokenize counts text's tokens with the upstream's tokenizer or, where it
// has none, estimates them (by is then estimated).
//
// The request shape is the one the upstream last accepted; before any was,
// vLLM's when the model list looked like vLLM's (max_model_len, owned_by
// "vllm"), else llama-server's. A 400 or 422 refuses the shape rather than
// the endpoint (a gateway in front of the other kind of server), so the
// other shape is tried once before the upstream counts as one without a
// tokenizer. An upstream that cannot be reached is estimated too, and err
// says so (a serverFault); every other failure is only an estimate.
func (e *Engine) tokenize(ctx context.Context, model, text string) (n int, by counter, err error) {
	e.mu.Lock()
	missing := !e.noTokenizeAt.IsZero() && time.Since(e.noTokenizeAt) < tokenizeRetry
	by = e.tokenizeAs
	if by == estimated {
		by = llamaServer
		if e.remotes[e.remote(model)].nativeN {
			by = vllm
		}
	}
	e.mu.Unlock()
	if missing {
		return EstimateTokens(text), estimated, nil
	}
	for try := 0; try < 2; try++ {
		status, n, ok, err := e.askTokenize(ctx, by, model, text)
		if ok {
			e.mu.Lock()
			e.tokenizeAs = by
			e.mu.Unlock()
			return n, by, nil
		}
		if f := faultOf(err); f != nil {
			return EstimateTokens(text), estimated, f
		}
		if try == 0 && (status == http.StatusBadRequest || status == http.StatusUnprocessableEntity) && ctx.Err() == nil {
			if by == vllm {
				by = llamaServer
			} else {
				by = vllm
			}
			continue
		}
		// A refusal of the request itself (404 from Ollama, 400 from a
		// server that takes neither shape) will not change from one
		// request to the next; a server error might.
		if status/100 == 4 || status == http.StatusNotImplemented {
			e.mu.Lock()
			e.noTokenizeAt = time.Now()
			e.mu.Unlock()
		}
		break
	}
	return EstimateTokens(text), estimated, nil
}

// askTokenize posts one /tokenize request in the shape of by: the answer's
// status (0 when none came, err then saying why) and, when ok, the number
// of tokens.
func (e *Engine) askTokenize(ctx context.Context, by counter, model, text string) (status, n int, ok bool, err error) {
	resp, err := e.do(ctx, http.MethodPost, "/tokenize", e.tokenizeBody(by, model, text))
	if err != nil {
		return 0, 0, false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, 0, false, nil
	}
	// Both servers answer {"tokens": [...]} (vLLM adds count and
	// max_model_len).
	var tok struct {
		Tokens []json.RawMessage `json:"tokens"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || tok.Tokens == nil {
		return resp.StatusCode, 0, false, nil
	}
	if len(tok.Tokens) == 0 && text != "" {
		// llama-server answers a body without "content" with no tokens
		// rather than an error: the shape was not understood.
		return http.StatusUnprocessableEntity, 0, false, nil
	}
	return resp.StatusCode, len(tok.Tokens), true, nil
}

// EstimateTokens is the fallback count: ceil(len(text)/4).
func EstimateTokens(text string) int { return (len(text) + 3) / 4 }
