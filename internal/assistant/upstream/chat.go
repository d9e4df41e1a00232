package upstream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
		// PromptTokensDetails is OpenAI's report of the prompt's tokens
		// the server reused from its cache, which vLLM (with
		// --enable-prompt-tokens-details) and recent llama-server builds
		// give too.
		PromptTokensDetails *struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
	// Truncated is llama-server's confession that it cut the prompt to
	// fit its context (older builds did so silently with a 200; newer ones
	// refuse). llama.cpp puts the flag at the top of its native final
	// response, which some servers pass on, and on the OpenAI endpoints
	// only in the final chunk's __verbose (a server run with --verbose).
	Truncated bool `json:"truncated"`
	Verbose   *struct {
		Truncated bool `json:"truncated"`
	} `json:"__verbose"`
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
	temperature := req.Temperature
	if temperature < 0.001 {
		// Greedy decoding, as the API defines such a temperature
		// (reference §3.2: 0 or < 0.001) and the local engine reads it;
		// the servers sample at any temperature above 0 (vLLM only from
		// 1e-5), however low, so it is asked as the 0 they all read as
		// greedy.
		temperature = 0
	}
	body := map[string]any{
		"model": e.remote(req.Model), "messages": openAIMessages(req.Messages), "stream": true, "n": n,
		"temperature": temperature, "stream_options": map[string]any{"include_usage": true},
	}
	switch {
	case req.TopP > 0:
		body["top_p"] = req.TopP
	case req.TopPSet:
		// An explicit top_p of 0 keeps only the most probable token (as
		// the local engine and llama.cpp read it); vLLM refuses 0 there,
		// so it is asked as greedy decoding, which is the same choice.
		body["temperature"] = 0.0
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
		// The provider's own roles are mapped as the local engine maps
		// them; OpenAI servers refuse roles they do not know.
		role, keep := assistant.ModelRole(m.Role)
		if !keep {
			continue
		}
		om := map[string]any{"role": role, "content": m.Content}
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

// streamed is what one upstream stream produced: its choices, finished,
// and the usage it reported (nil when it streamed none).
type streamed struct {
	choices []assistant.Choice
	usage   *assistant.Usage
	// cut is set on a stream the client cut short (cut.go): its choices
	// hold the text read up to the cut, unfinished, and calls each
	// choice's tool-call fragments as they came, unassembled.
	cut   bool
	calls []string
}

// Generate streams POST /v1/chat/completions and relays its SSE deltas.
// Tool-call fragments are assembled, not relayed: the call is reported whole
// in the result (reference §3.4 rule 9). n > 1 choices are asked of the
// upstream in one request only where it generates them itself (vLLM);
// elsewhere they are fanned out as n requests (fanout.go).
//
// A generation the client cuts short returns its error with the usage of
// what the upstream streamed up to the cut (cut.go), which the service
// bills.
func (e *Engine) Generate(ctx context.Context, req assistant.GenerateRequest, emit func(assistant.Delta) error) (assistant.Result, error) {
	n := max(req.N, 1)
	clamped, err := e.clampMaxTokens(ctx, req)
	if err != nil {
		return assistant.Result{}, err
	}
	limit := cutLimit(req.MaxTokens, clamped)
	req.MaxTokens, req.N = clamped, n
	if n > 1 && !e.answersN(ctx, req.Model) {
		return e.fanOut(ctx, req, limit, emit)
	}
	s, err := e.chat(ctx, req, n, emit)
	if n > 1 && errors.Is(err, errOneChoice) {
		// The model list looked like vLLM's but the server is not (a
		// gateway in front of a llama-server, say). The refusal comes
		// before any text, so the choices can still be fanned out.
		e.mu.Lock()
		e.oneChoice = true
		e.mu.Unlock()
		return e.fanOut(ctx, req, limit, emit)
	}
	if err != nil {
		if s.cut {
			return assistant.Result{Usage: e.cutUsage(ctx, req, limit, []streamed{s})}, err
		}
		return assistant.Result{}, err
	}
	return assistant.Result{Choices: s.choices, Usage: e.usage(ctx, req, []streamed{s}, 0)}, nil
}

// chat sends one request for n choices and reads its stream. A request
// the upstream refuses for its max_tokens is sent once more with the room
// the refusal names, as a client's huge max_tokens means.
func (e *Engine) chat(ctx context.Context, req assistant.GenerateRequest, n int, emit func(assistant.Delta) error) (streamed, error) {
	resp, err := e.startChat(ctx, req, n)
	if m, ok := retryMaxTokens(err, req.MaxTokens); ok {
		req.MaxTokens = m
		resp, err = e.startChat(ctx, req, n)
	}
	if err != nil {
		return streamed{}, err
	}
	defer resp.Body.Close()
	return readStream(ctx, resp.Body, n, emit)
}

// ScanSSELines is bufio.ScanLines with the event-stream format's line
// ends (WHATWG HTML §9.2.6): CRLF, LF or a bare CR. bufio.ScanLines ends
// lines at LF only, so a server that ends them with CR alone had its
// whole stream read as one line and none of its chunks seen. A CR that
// is the last byte read so far may be the first half of a CRLF whose LF
// the next read brings, so it waits for that byte (or the end of the
// body) rather than end a line there and read the LF as a second, empty
// line: how the body is cut into reads must not change its lines.
// Exported for the benchmark client (partnerapi bench assistant), which
// reads event streams the same way.
func ScanSSELines(data []byte, atEOF bool) (advance int, token []byte, err error) {
	for i, c := range data {
		switch {
		case c == '\n':
			return i + 1, data[:i], nil
		case c != '\r':
			continue
		case i+1 < len(data):
			if data[i+1] == '\n' {
				return i + 2, data[:i], nil
			}
			return i + 1, data[:i], nil
		case atEOF:
			return i + 1, data[:i], nil
		default:
			return 0, nil, nil // is an LF next?
		}
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}

// readStream reads one upstream SSE stream of n choices to its [DONE]. A
// stream the client cut short (its context ended, or emit could not
// deliver a delta) returns the error with what was read up to the cut
// (cutShort), so the generation can be billed for it.
func readStream(ctx context.Context, body io.Reader, n int, emit func(assistant.Delta) error) (streamed, error) {
	out := streamed{choices: make([]assistant.Choice, n)}
	text := make([]strings.Builder, n)
	calls := make([]call, n)
	for i := range out.choices {
		out.choices[i].Index = i
	}
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	sc.Split(ScanSSELines)
	// partial is set when the stream ended inside a chunk.
	done, partial := false, false
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
			if ctx.Err() != nil {
				// A read cut short by the cancellation leaves the
				// scanner a last line cut mid-chunk: that is the cut,
				// not a bad upstream.
				return cutShort(out, text, calls), ctx.Err()
			}
			if !sc.Scan() {
				// The stream ended inside this line: the scanner hands
				// over what it had when the read failed or the body
				// ended, so a connection broken mid-chunk reads as a
				// chunk cut in two. That is a stream cut short, the
				// server's fault (below), which another replica may
				// answer; only a line the stream goes on after is bad.
				partial = true
				break
			}
			return streamed{}, fmt.Errorf("upstream: bad chunk %q: %w", data, err)
		}
		if c.Error != nil {
			if strings.Contains(strings.ToLower(c.Error.Message), "context") {
				return streamed{}, fmt.Errorf("upstream: %w: %s", assistant.ErrContextWindow, c.Error.Message)
			}
			return streamed{}, fmt.Errorf("upstream: %s", c.Error.Message)
		}
		if c.Truncated || (c.Verbose != nil && c.Verbose.Truncated) {
			// The answer is to a prompt the client did not send: 413, as
			// for a prompt the upstream refuses (inference reference §10).
			// The flag comes with the last chunk, so a stream already
			// under way ends with the transports' in-band error.
			return streamed{}, fmt.Errorf("upstream: %w: the upstream truncated the prompt to its context", assistant.ErrContextWindow)
		}
		for _, ch := range c.Choices {
			if ch.Index < 0 || ch.Index >= n {
				return streamed{}, fmt.Errorf("upstream: choice index %d out of range", ch.Index)
			}
			if ch.Delta.Content != "" {
				text[ch.Index].WriteString(ch.Delta.Content)
				if emit != nil {
					if err := emit(assistant.Delta{Index: ch.Index, Text: ch.Delta.Content}); err != nil {
						return cutShort(out, text, calls), err
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
				out.choices[ch.Index].FinishReason = *ch.FinishReason
			}
		}
		if c.Usage != nil {
			u := &assistant.Usage{PromptTokens: max(c.Usage.PromptTokens, 0), CompletionTokens: max(c.Usage.CompletionTokens, 0)}
			if d := c.Usage.PromptTokensDetails; d != nil {
				u.PrecachedPromptTokens = min(max(d.CachedTokens, 0), u.PromptTokens)
			}
			out.usage = u
		}
	}
	if ctx.Err() != nil {
		return cutShort(out, text, calls), ctx.Err()
	}
	// A stream cut short is the server's fault (it died, or something
	// between us broke the connection): another replica may answer the
	// request, if nothing of this answer reached the client yet.
	if err := sc.Err(); err != nil {
		return streamed{}, &serverFault{err: fmt.Errorf("upstream: stream: %w", err), reason: ReasonStream}
	}
	if !done && (partial || !finished(out.choices)) {
		// LocalAI before v3.8.0 sent no [DONE] at all (inference
		// reference §9), so a response that ended cleanly after every
		// choice's finish_reason is whole; without them it was cut short.
		return streamed{}, &serverFault{err: errors.New("upstream: stream ended without [DONE]"), reason: ReasonStream}
	}
	for i := range out.choices {
		out.choices[i].Text = text[i].String()
		finishChoice(&out.choices[i], &calls[i])
	}
	return out, nil
}

// finished reports whether every choice was given its finish_reason.
func finished(choices []assistant.Choice) bool {
	for _, ch := range choices {
		if ch.FinishReason == "" {
			return false
		}
	}
	return true
}

// finishChoice settles a streamed choice's call and its finish reason on
// the names this API has.
func finishChoice(ch *assistant.Choice, c *call) {
	if c.seen {
		finishCall(ch, c)
	}
	switch ch.FinishReason {
	case "", "stop", "length", "error":
		if ch.FinishReason == "" {
			ch.FinishReason = "stop"
		}
	case "function_call", "tool_calls":
		// A finish naming a call that could not be assembled (or never
		// came): clients read a function_call finish as the promise of a
		// call to run.
		if ch.FunctionCall == nil {
			ch.FinishReason = "error"
		}
	case "content_filter":
		// The server's filter withheld the rest of the answer: this API's
		// name for an answer its topic restrictions stopped is blacklist
		// (reference §3.3), which tells the client the text is not the
		// model's whole answer, as a stop would say it is.
		ch.FinishReason = "blacklist"
	default:
		// Server-specific reasons: this API has no name for them, and the
		// text simply stopped.
		ch.FinishReason = "stop"
	}
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

// usage is a generation's usage from the streams that produced it. The
// prompt is counted once, as OpenAI and the local engine count n choices,
// although a fanned-out request sent it n times: every stream reports the
// same prompt, so the largest report stands for it. Completions add up.
// The prompt's tokens the upstream reused from its cache are
// precached_prompt_tokens, which the client is not billed for (reference
// §3.3), as with the local engine's cache; of several streams, the one
// that reused the fewest stands for the prompt counted once.
//
// A stream without usage (servers that ignore stream_options, such as
// older Ollama and llama-server builds) would otherwise report zero tokens
// and bill nothing, so its choices are counted here: each choice's text and
// call arguments as generated, and the prompt, when no stream reported it,
// as its messages' text without the chat template's few tokens, which only
// the upstream knows. CountTokens asks the upstream's tokenizer where it
// has one and estimates otherwise.
//
// A stream cut short (cut.go) counts its text and tool-call fragments read
// up to the cut the same way, each choice at most limit tokens (0: no
// limit), as the upstream could not have generated more.
func (e *Engine) usage(ctx context.Context, req assistant.GenerateRequest, parts []streamed, limit int) assistant.Usage {
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
	var u assistant.Usage
	promptSeen := false
	precached := 0
	capped := func(n, choices int) int {
		if limit > 0 {
			return min(n, limit*choices)
		}
		return n
	}
	for _, p := range parts {
		if p.usage != nil {
			if !promptSeen || p.usage.PrecachedPromptTokens < precached {
				precached = p.usage.PrecachedPromptTokens
			}
			promptSeen = true
			u.PromptTokens = max(u.PromptTokens, p.usage.PromptTokens)
			u.CompletionTokens += capped(p.usage.CompletionTokens, len(p.choices))
			continue
		}
		for i, ch := range p.choices {
			text := ch.Text
			if ch.FunctionCall != nil {
				text += ch.FunctionCall.Name + string(ch.FunctionCall.Arguments)
			}
			if i < len(p.calls) {
				text += p.calls[i]
			}
			u.CompletionTokens += capped(count(text), 1)
		}
	}
	if !promptSeen {
		u.PromptTokens = count(promptText(req.Messages))
	}
	u.PrecachedPromptTokens = min(precached, u.PromptTokens)
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
