package upstream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"partnerapi/internal/assistant"
)

// chunk is one OpenAI streaming event.
type chunk struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content   string          `json:"content"`
			ToolCalls []toolCallDelta `json:"tool_calls"`
			// Older servers still answer in the deprecated functions API.
			FunctionCall *functionDelta `json:"function_call"`
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

type toolCallDelta struct {
	Index    int           `json:"index"`
	ID       string        `json:"id"`
	Function functionDelta `json:"function"`
}

type functionDelta struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// call assembles one choice's first tool call from its streamed fragments:
// the name arrives whole or in pieces, the arguments as pieces of a JSON
// string. The assistant API carries one call per message, so further tool
// calls are dropped.
type call struct {
	seen bool
	name strings.Builder
	args strings.Builder
}

func (c *call) add(d functionDelta) {
	c.seen = true
	c.name.WriteString(d.Name)
	c.args.WriteString(d.Arguments)
}

// requestBody is the OpenAI chat request for req, streaming with usage.
// max_tokens is req.MaxTokens as clampMaxTokens left it (0: none sent).
func (e *Engine) requestBody(req assistant.GenerateRequest, n int) map[string]any {
	body := map[string]any{
		"model": e.remote(req.Model), "messages": openAIMessages(req.Messages), "stream": true, "n": n,
		"temperature": req.Temperature, "stream_options": map[string]any{"include_usage": true},
	}
	if req.TopP > 0 {
		body["top_p"] = req.TopP
	}
	if req.MaxTokens > 0 {
		body["max_tokens"] = req.MaxTokens
	}
	if req.RepetitionPenalty > 0 && req.RepetitionPenalty != 1 {
		// The servers disagree on the name: llama-server reads
		// repeat_penalty, vLLM repetition_penalty. Each ignores the other's
		// (llama-server skips unknown JSON fields, vLLM accepts extra
		// fields), so both are sent. Ollama's OpenAI endpoint has neither.
		body["repeat_penalty"] = req.RepetitionPenalty
		body["repetition_penalty"] = req.RepetitionPenalty
	}
	if req.Seed != 0 {
		body["seed"] = req.Seed
	}
	if len(req.Functions) > 0 {
		tools := make([]any, 0, len(req.Functions))
		for _, f := range req.Functions {
			fn := map[string]any{"name": f.Name}
			if f.Description != "" {
				fn["description"] = f.Description
			}
			if p := bytes.TrimSpace(f.Parameters); len(p) > 0 && string(p) != "null" {
				fn["parameters"] = json.RawMessage(p)
			}
			tools = append(tools, map[string]any{"type": "function", "function": fn})
		}
		body["tools"] = tools
		switch req.FunctionCall.Mode {
		case assistant.FunctionCallNone:
			body["tool_choice"] = "none"
		case assistant.FunctionCallName:
			body["tool_choice"] = map[string]any{"type": "function", "function": map[string]any{"name": req.FunctionCall.Name}}
		default:
			body["tool_choice"] = "auto"
		}
	}
	return body
}

// openAIMessages translates the conversation: an assistant message with a
// function_call becomes one with tool_calls (arguments as a JSON string),
// and a role "function" result becomes a role "tool" message answering the
// latest call of that function by its id. The id is the call's
// functions_state_id when the client passed it back, else a stable
// "call_<message index>". The provider's extra roles are mapped to ones
// OpenAI servers accept.
func openAIMessages(msgs []assistant.Message) []map[string]any {
	out := make([]map[string]any, 0, len(msgs))
	callIDs := map[string]string{} // function name → id of its latest call
	lastID := ""
	for i, m := range msgs {
		om := map[string]any{"role": m.Role, "content": m.Content}
		switch m.Role {
		case "function_in_progress":
			// The provider's progress notice: nothing an upstream model
			// should see, and a role OpenAI servers refuse.
			continue
		case "search_result":
			// Retrieved text the client supplies; OpenAI has no such role.
			om["role"] = "user"
		}
		switch {
		case m.FunctionCall != nil:
			id := m.FunctionsStateID
			if id == "" {
				id = "call_" + strconv.Itoa(i)
			}
			callIDs[m.FunctionCall.Name], lastID = id, id
			om["tool_calls"] = []any{map[string]any{"id": id, "type": "function",
				"function": map[string]any{"name": m.FunctionCall.Name, "arguments": argumentsString(m.FunctionCall.Arguments)}}}
		case m.Role == "function":
			id, ok := callIDs[m.Name]
			if !ok {
				id = lastID
			}
			if id == "" {
				id = "call_" + m.Name
			}
			om["role"], om["tool_call_id"] = "tool", id
			if m.Name != "" {
				om["name"] = m.Name
			}
		case m.Name != "":
			om["name"] = m.Name
		}
		out = append(out, om)
	}
	return out
}

// argumentsString is OpenAI's spelling of arguments: a JSON string holding
// the object. Arguments a client already sent as a string pass as they are.
func argumentsString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return "{}"
	}
	return string(raw)
}

// Generate streams POST /v1/chat/completions and relays its SSE deltas.
// Tool-call fragments are assembled, not relayed: the call is reported whole
// in the result (reference §3.4 rule 9).
func (e *Engine) Generate(ctx context.Context, req assistant.GenerateRequest, emit func(assistant.Delta) error) (assistant.Result, error) {
	n := max(req.N, 1)
	clamped, err := e.clampMaxTokens(ctx, req)
	if err != nil {
		return assistant.Result{}, err
	}
	sent := req
	sent.MaxTokens = clamped
	resp, err := e.startChat(ctx, sent, n)
	if m, ok := retryMaxTokens(err, sent.MaxTokens); ok {
		// The prompt fits but not with max_tokens on top: once more with
		// the room the upstream named, as a client's huge max_tokens means.
		sent.MaxTokens = m
		resp, err = e.startChat(ctx, sent, n)
	}
	if err != nil {
		return assistant.Result{}, err
	}
	defer resp.Body.Close()
	res := assistant.Result{Choices: make([]assistant.Choice, n)}
	text := make([]strings.Builder, n)
	calls := make([]call, n)
	for i := range res.Choices {
		res.Choices[i].Index = i
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	done, usageSeen := false, false
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
				if emit != nil {
					if err := emit(assistant.Delta{Index: ch.Index, Text: ch.Delta.Content}); err != nil {
						return assistant.Result{}, err
					}
				}
			}
			for _, tc := range ch.Delta.ToolCalls {
				if tc.Index == 0 {
					calls[ch.Index].add(tc.Function)
				}
			}
			if fc := ch.Delta.FunctionCall; fc != nil {
				calls[ch.Index].add(*fc)
			}
			if ch.FinishReason != nil && *ch.FinishReason != "" {
				res.Choices[ch.Index].FinishReason = *ch.FinishReason
			}
		}
		if c.Usage != nil {
			usageSeen = true
			res.Usage.PromptTokens = max(c.Usage.PromptTokens, 0)
			res.Usage.CompletionTokens = max(c.Usage.CompletionTokens, 0)
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
		ch := &res.Choices[i]
		ch.Text = text[i].String()
		if calls[i].seen {
			finishCall(ch, &calls[i])
		}
		switch ch.FinishReason {
		case "", "stop", "length", "error":
			if ch.FinishReason == "" {
				ch.FinishReason = "stop"
			}
		case "function_call", "tool_calls":
			// A finish naming a call that could not be assembled (or
			// never came): clients read a function_call finish as the
			// promise of a call to run.
			if ch.FunctionCall == nil {
				ch.FinishReason = "error"
			}
		default:
			// content_filter and server-specific reasons: this API has no
			// name for them, and the text simply stopped.
			ch.FinishReason = "stop"
		}
	}
	if !usageSeen {
		res.Usage = e.countUsage(ctx, req, res.Choices)
	}
	return res, nil
}

// startChat sends the chat request and returns the streaming response, or
// the upstream's refusal as an error.
func (e *Engine) startChat(ctx context.Context, req assistant.GenerateRequest, n int) (*http.Response, error) {
	resp, err := e.do(ctx, http.MethodPost, "/v1/chat/completions", e.requestBody(req, n))
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		return nil, upstreamError(resp)
	}
	return resp, nil
}

// countUsage counts a generation's tokens for an upstream that streamed no
// usage (servers that ignore stream_options, such as older Ollama and
// llama-server builds): the answer would otherwise report zero tokens and
// bill nothing. The prompt is its messages' text, without the chat
// template's few tokens, which only the upstream knows; each choice's text
// and call arguments are counted as generated. CountTokens asks the
// upstream's tokenizer where it has one and estimates otherwise.
func (e *Engine) countUsage(ctx context.Context, req assistant.GenerateRequest, choices []assistant.Choice) assistant.Usage {
	count := func(text string) int {
		if text == "" {
			return 0
		}
		n, err := e.CountTokens(ctx, req.Model, text)
		if err != nil {
			return EstimateTokens(text)
		}
		return n
	}
	u := assistant.Usage{PromptTokens: count(promptText(req.Messages))}
	for _, ch := range choices {
		text := ch.Text
		if ch.FunctionCall != nil {
			text += ch.FunctionCall.Name + string(ch.FunctionCall.Arguments)
		}
		u.CompletionTokens += count(text)
	}
	return u
}

// finishCall turns an assembled tool call into this API's function_call,
// whose arguments are a JSON object; arguments that are not one end the
// choice with finish_reason "error" (reference §3.3).
func finishCall(ch *assistant.Choice, c *call) {
	raw := strings.TrimSpace(c.args.String())
	if raw == "" {
		raw = "{}"
	}
	var obj map[string]json.RawMessage
	if c.name.Len() == 0 || json.Unmarshal([]byte(raw), &obj) != nil || obj == nil {
		ch.FinishReason = "error"
		return
	}
	var compact bytes.Buffer
	_ = json.Compact(&compact, []byte(raw))
	ch.FunctionCall = &assistant.FunctionCall{Name: c.name.String(), Arguments: compact.Bytes()}
	ch.FinishReason = "function_call"
}
