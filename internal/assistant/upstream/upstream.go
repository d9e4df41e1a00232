// Package upstream serves assistant models from an OpenAI-compatible server
// (llama-server, vLLM, Ollama) so the chat service can route some models away
// from the in-process engine.
package upstream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"partnerapi/internal/assistant"
)

// Engine is an assistant.Engine backed by one OpenAI-compatible base URL.
type Engine struct {
	base   string
	client *http.Client
}

// New returns an engine for base (e.g. "http://127.0.0.1:8080").
func New(base string, client *http.Client) *Engine {
	if client == nil {
		client = http.DefaultClient
	}
	return &Engine{base: strings.TrimRight(base, "/"), client: client}
}

var _ assistant.Engine = (*Engine)(nil)

func (e *Engine) do(ctx context.Context, method, path string, body any) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	// The request carries ctx so cancellation closes the upstream connection.
	req, err := http.NewRequestWithContext(ctx, method, e.base+path, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return e.client.Do(req)
}

// upstreamError turns a non-2xx response into an error, mapping context
// overflows (which upstreams report as 400 with varying wording) to
// assistant.ErrContextWindow so our transports answer as for the local engine.
func upstreamError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	msg := strings.ToLower(string(b))
	if strings.Contains(msg, "context") && (strings.Contains(msg, "exceed") || strings.Contains(msg, "length") || strings.Contains(msg, "window")) {
		return fmt.Errorf("upstream: %w: %s", assistant.ErrContextWindow, strings.TrimSpace(string(b)))
	}
	if resp.StatusCode == http.StatusNotFound && strings.Contains(msg, "model") {
		return fmt.Errorf("upstream: %w: %s", assistant.ErrNoSuchModel, strings.TrimSpace(string(b)))
	}
	if resp.StatusCode == http.StatusServiceUnavailable || resp.StatusCode == http.StatusTooManyRequests {
		return fmt.Errorf("upstream: %w: %s", assistant.ErrEngineBusy, strings.TrimSpace(string(b)))
	}
	return fmt.Errorf("upstream: status %d: %s", resp.StatusCode, strings.TrimSpace(string(b)))
}

// Models lists GET /v1/models.
func (e *Engine) Models(ctx context.Context) ([]assistant.ModelInfo, error) {
	resp, err := e.do(ctx, http.MethodGet, "/v1/models", nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return nil, upstreamError(resp)
	}
	var list struct {
		Data []struct {
			ID      string `json:"id"`
			OwnedBy string `json:"owned_by"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return nil, fmt.Errorf("upstream: models: %w", err)
	}
	out := make([]assistant.ModelInfo, 0, len(list.Data))
	for _, m := range list.Data {
		out = append(out, assistant.ModelInfo{Name: m.ID, Version: "1.0", OwnedBy: m.OwnedBy, Type: "chat"})
	}
	return out, nil
}

// CountTokens asks llama-server's POST /tokenize; upstreams without it (vLLM
// at /v1, Ollama) get an estimate of one token per 4 bytes, rounded up, which
// is the usual ratio for English BPE vocabularies and only used for billing
// previews, never for the context check (the upstream does that itself).
func (e *Engine) CountTokens(ctx context.Context, model, text string) (int, error) {
	resp, err := e.do(ctx, http.MethodPost, "/tokenize", map[string]any{"content": text, "add_special": false, "model": model})
	if err == nil {
		defer resp.Body.Close()
		if resp.StatusCode/100 == 2 {
			var tok struct {
				Tokens []json.RawMessage `json:"tokens"`
			}
			if derr := json.NewDecoder(resp.Body).Decode(&tok); derr == nil {
				return len(tok.Tokens), nil
			}
		}
	} else if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	return EstimateTokens(text), nil
}

// EstimateTokens is the fallback count: ceil(len(text)/4).
func EstimateTokens(text string) int { return (len(text) + 3) / 4 }

type chunk struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content string `json:"content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// Generate streams POST /v1/chat/completions and relays its SSE deltas.
func (e *Engine) Generate(ctx context.Context, req assistant.GenerateRequest, emit func(assistant.Delta) error) (assistant.Result, error) {
	n := req.N
	if n < 1 {
		n = 1
	}
	msgs := make([]map[string]any, 0, len(req.Messages))
	for _, m := range req.Messages {
		om := map[string]any{"role": m.Role, "content": m.Content}
		if m.Name != "" {
			om["name"] = m.Name
		}
		msgs = append(msgs, om)
	}
	body := map[string]any{
		"model": req.Model, "messages": msgs, "stream": true, "n": n,
		"temperature": req.Temperature, "stream_options": map[string]any{"include_usage": true},
	}
	if req.TopP > 0 {
		body["top_p"] = req.TopP
	}
	if req.MaxTokens > 0 {
		body["max_tokens"] = req.MaxTokens
	}
	if req.RepetitionPenalty > 0 && req.RepetitionPenalty != 1 {
		body["repeat_penalty"] = req.RepetitionPenalty
	}
	if req.Seed != 0 {
		body["seed"] = req.Seed
	}
	resp, err := e.do(ctx, http.MethodPost, "/v1/chat/completions", body)
	if err != nil {
		if ctx.Err() != nil {
			return assistant.Result{}, ctx.Err()
		}
		return assistant.Result{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return assistant.Result{}, upstreamError(resp)
	}
	res := assistant.Result{Choices: make([]assistant.Choice, n)}
	var text = make([]strings.Builder, n)
	for i := range res.Choices {
		res.Choices[i].Index = i
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	done := false
	for !done && sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "data:") {
			continue // comments, event:, blank separators
		}
		data := strings.TrimSpace(strings.TrimPrefix(line, "data:"))
		if data == "[DONE]" {
			done = true
			break
		}
		var c chunk
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			return assistant.Result{}, fmt.Errorf("upstream: bad chunk %q: %w", data, err)
		}
		if c.Error != nil {
			if strings.Contains(strings.ToLower(c.Error.Message), "context") {
				return assistant.Result{}, fmt.Errorf("upstream: %w: %s", assistant.ErrContextWindow, c.Error.Message)
			}
			return assistant.Result{}, fmt.Errorf("upstream: %s", c.Error.Message)
		}
		for _, ch := range c.Choices {
			if ch.Index < 0 || ch.Index >= n {
				return assistant.Result{}, fmt.Errorf("upstream: choice index %d out of range", ch.Index)
			}
			if ch.Delta.Content != "" {
				text[ch.Index].WriteString(ch.Delta.Content)
				if err := emit(assistant.Delta{Index: ch.Index, Text: ch.Delta.Content}); err != nil {
					return assistant.Result{}, err
				}
			}
			if ch.FinishReason != nil && *ch.FinishReason != "" {
				res.Choices[ch.Index].FinishReason = *ch.FinishReason
			}
		}
		if c.Usage != nil {
			res.Usage.PromptTokens = c.Usage.PromptTokens
			res.Usage.CompletionTokens = c.Usage.CompletionTokens
		}
	}
	if ctx.Err() != nil {
		return assistant.Result{}, ctx.Err()
	}
	if err := sc.Err(); err != nil {
		return assistant.Result{}, fmt.Errorf("upstream: stream: %w", err)
	}
	if !done {
		return assistant.Result{}, fmt.Errorf("upstream: stream ended without [DONE]")
	}
	for i := range res.Choices {
		res.Choices[i].Text = text[i].String()
		if res.Choices[i].FinishReason == "" {
			res.Choices[i].FinishReason = "stop"
		}
	}
	return res, nil
}
