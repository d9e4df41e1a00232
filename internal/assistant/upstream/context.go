package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"partnerapi/internal/assistant"
)

// Clients send max_tokens far beyond any context window (the npm client's
// and gigago's 999999999) and mean "as much as fits" by it (reference §3.2,
// §6). vLLM refuses a request whose prompt and max_tokens together exceed
// the model's context with a 400, which would otherwise reach the client
// as 413 although its prompt fits. So max_tokens is clamped to the room
// the prompt leaves when the upstream's context length is known, and the
// one request vLLM still refuses for it is retried with the room its error
// names.
//
// A prompt over the window must be refused, never truncated (reference
// §4, 413). vLLM refuses it itself, newer llama-server builds too; older
// llama-server builds truncate it, which the check below and the truncated
// flag (chat.go) catch. Ollama truncates silently as well, but through its
// OpenAI API it names neither its window nor, before generating, the
// prompt's size, and the prompt_tokens it reports afterwards count the
// truncated prompt with a tokenizer this package has no access to. Such a
// prompt is therefore not caught on Ollama: a known gap.

// contextLength is the context window of the served model in tokens, 0
// when the upstream does not say: vLLM lists it as max_model_len in
// /v1/models, llama-server gives its slots' n_ctx in /props. An upstream
// that cannot be reached, or is busy, is the error: the chat request would
// only meet it again, a round trip (or a dial timeout) later.
func (e *Engine) contextLength(ctx context.Context, model string) (int, error) {
	_, err := e.Models(ctx)
	if err == nil {
		e.mu.Lock()
		n := e.remotes[e.remote(model)].ctxLen
		e.mu.Unlock()
		if n > 0 {
			return n, nil
		}
	} else if f := faultOf(err); f != nil && f.down {
		return 0, err
	}
	return e.propsContext(ctx), nil
}

// propsContext asks llama-server's GET /props for n_ctx, at most once per
// ModelsTTL (a failure too: servers without /props are not asked on every
// request).
func (e *Engine) propsContext(ctx context.Context) int {
	e.mu.Lock()
	if !e.propsAt.IsZero() && time.Since(e.propsAt) < max(e.ModelsTTL, time.Second) {
		n := e.propsCtx
		e.mu.Unlock()
		return n
	}
	e.mu.Unlock()
	n := 0
	pctx, cancel := context.WithTimeout(ctx, e.ModelsTimeout)
	defer cancel()
	if resp, err := e.do(pctx, http.MethodGet, "/props", nil); err == nil {
		var props struct {
			NCtx     int `json:"n_ctx"`
			Defaults struct {
				NCtx int `json:"n_ctx"`
			} `json:"default_generation_settings"`
		}
		if resp.StatusCode/100 == 2 && json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&props) == nil {
			// The slot's n_ctx is what one request may fill (the server's
			// n_ctx is shared by its parallel slots).
			n = props.Defaults.NCtx
			if n <= 0 {
				n = props.NCtx
			}
		}
		resp.Body.Close()
	}
	if ctx.Err() != nil {
		return 0
	}
	e.mu.Lock()
	e.propsCtx, e.propsAt = max(n, 0), time.Now()
	e.mu.Unlock()
	return max(n, 0)
}

// clampMaxTokens checks req's prompt against the context window and is the
// max_tokens to send for it.
//
// Where the upstream's tokenizer counts the prompt's text, a text at or
// over the window is ErrContextWindow before anything is generated,
// whatever max_tokens says: the chat template only adds tokens to it.
// Older llama-server builds truncate such a prompt and answer 200
// (inference reference §10), and the flag they may set comes only at the
// end of the answer; vLLM would refuse it, a round trip later.
//
// On llama-server (whose window /props names) max_tokens is then clamped
// to the room the text leaves. On vLLM (whose window its model list names)
// and where only an estimate exists, max_tokens is not judged by the count:
// the text's count lacks the template's tokens, and vLLM judges max_tokens
// against the real prompt itself. A max_tokens that fits any prompt is sent
// unchanged, a larger one not at all: vLLM's default is exactly the room
// left. An unknown window (Ollama) leaves max_tokens as it is.
func (e *Engine) clampMaxTokens(ctx context.Context, req assistant.GenerateRequest) (int, error) {
	maxTokens := max(req.MaxTokens, 0)
	window, err := e.contextLength(ctx, req.Model)
	if err != nil {
		return 0, err
	}
	if window <= 0 {
		return maxTokens, nil
	}
	prompt, by, err := e.tokenize(ctx, req.Model, promptText(req.Messages))
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	if err != nil {
		return 0, err
	}
	switch {
	case by != estimated && prompt >= window:
		return 0, assistant.ErrContextWindow
	case by == llamaServer && maxTokens > 0:
		return min(maxTokens, window-prompt), nil
	case maxTokens >= window:
		return 0, nil
	}
	return maxTokens, nil
}

// vLLM's wordings of a request over the context window, old and new:
//
//	This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (1000 in the messages, 4000 in the completion). …
//	'max_tokens' or 'max_completion_tokens' is too large: 8000. This model's maximum context length is 4096 tokens and your request has 2778 input tokens (8000 > 4096 - 2778). …
//	This model's maximum context length is 1536 tokens. However, your request has 4176 input tokens. …
var (
	windowRE = regexp.MustCompile(`maximum context length is (\d+)`)
	promptRE = regexp.MustCompile(`(\d+)(?: tokens)? in the messages|has (\d+) input tokens`)
)

// overflowError is an upstream's refusal of a request over the context
// window, with what its text tells: the window and the prompt's tokens
// (0 when not said).
type overflowError struct {
	window, prompt int
	err            error
}

func (o *overflowError) Error() string { return o.err.Error() }
func (o *overflowError) Unwrap() error { return o.err }

// parseOverflow reads an upstream's context-window error text.
func parseOverflow(text string, err error) *overflowError {
	o := &overflowError{err: err}
	if m := windowRE.FindStringSubmatch(text); m != nil {
		o.window, _ = strconv.Atoi(m[1])
	}
	if m := promptRE.FindStringSubmatch(text); m != nil {
		s := m[1]
		if s == "" {
			s = m[2]
		}
		o.prompt, _ = strconv.Atoi(s)
	}
	return o
}

// retryMaxTokens is the max_tokens of the one retry after the upstream
// refused a request that sent max_tokens for the context window: the
// room its error names, or none at all (the upstream's default, the room
// left) when it names no prompt size. ok is false when no retry can help:
// the prompt alone fills the window.
func retryMaxTokens(err error, sent int) (maxTokens int, ok bool) {
	var o *overflowError
	if sent <= 0 || !errors.As(err, &o) {
		return 0, false
	}
	if o.window > 0 && o.prompt > 0 {
		if o.prompt >= o.window {
			return 0, false
		}
		return min(sent, o.window-o.prompt), true
	}
	return 0, true
}

// promptText is the conversation's text as usage counts it.
func promptText(msgs []assistant.Message) string {
	var prompt strings.Builder
	for _, m := range msgs {
		prompt.WriteString(m.Content)
		if m.FunctionCall != nil {
			prompt.WriteString(m.FunctionCall.Name)
			prompt.Write(m.FunctionCall.Arguments)
		}
		prompt.WriteByte('\n')
	}
	return prompt.String()
}
