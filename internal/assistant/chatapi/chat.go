package chatapi

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"

	"partnerapi/internal/assistant"
	"partnerapi/internal/web"
)

type wireUsage struct {
	PromptTokens          int `json:"prompt_tokens"`
	CompletionTokens      int `json:"completion_tokens"`
	TotalTokens           int `json:"total_tokens"`
	PrecachedPromptTokens int `json:"precached_prompt_tokens"`
}

// toWireUsage reports usage as the provider does: prompt_tokens leaves
// out the tokens reused from the cache, which precached_prompt_tokens
// counts, so that total_tokens is what the client is billed.
func toWireUsage(u assistant.Usage) *wireUsage {
	prompt := u.UncachedPromptTokens()
	return &wireUsage{prompt, u.CompletionTokens, prompt + u.CompletionTokens, u.PrecachedPromptTokens}
}

type wireChoiceMessage struct {
	Content          string            `json:"content"`
	Role             string            `json:"role"`
	FunctionCall     *wireFunctionCall `json:"function_call,omitempty"`
	FunctionsStateID string            `json:"functions_state_id,omitempty"`
}

// toWireCall is a function call as this API spells it: arguments a JSON
// object, not OpenAI's string (reference §3.3).
func toWireCall(c *assistant.FunctionCall) *wireFunctionCall {
	if c == nil {
		return nil
	}
	return &wireFunctionCall{Name: c.Name, Arguments: c.Arguments}
}

type wireChoice struct {
	Message      wireChoiceMessage `json:"message"`
	Index        int               `json:"index"`
	FinishReason string            `json:"finish_reason"`
}

type wireCompletion struct {
	Choices []wireChoice `json:"choices"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Object  string       `json:"object"`
	Usage   *wireUsage   `json:"usage"`
}

type streamDelta struct {
	Content          string            `json:"content"`
	Role             string            `json:"role,omitempty"`
	FunctionCall     *wireFunctionCall `json:"function_call,omitempty"`
	FunctionsStateID string            `json:"functions_state_id,omitempty"`
}

type streamChoice struct {
	Delta        streamDelta `json:"delta"`
	Index        int         `json:"index"`
	FinishReason string      `json:"finish_reason,omitempty"`
}

type streamEvent struct {
	Choices []streamChoice `json:"choices"`
	Created int64          `json:"created"`
	Model   string         `json:"model"`
	Object  string         `json:"object"`
	Usage   *wireUsage     `json:"usage,omitempty"`
}

func (s *server) chat(w http.ResponseWriter, r *http.Request) {
	req, stream, err := decodeChatRequest(r.Body)
	if err != nil {
		s.bodyError(w, r, err)
		return
	}
	p := principal(r)
	c, err := s.svc.PrepareChat(r.Context(), p, req)
	if err != nil {
		s.domainError(w, r, err)
		return
	}
	release, err := s.svc.Acquire(r.Context(), p)
	if err != nil {
		s.domainError(w, r, err)
		return
	}
	defer release()
	// A generation may outlast the platform's write deadline, which runs
	// from the request's start: the answer gets the whole deadline from
	// when it is ready (a stream lifts it at its first event).
	web.DeferWriteDeadline(w)
	created := time.Now().Unix()
	model := c.Model.Name + ":" + c.Model.Version
	if stream {
		st := &sseStream{w: w, r: r, created: created, model: model, roleSent: map[int]bool{},
			pending: map[int]*strings.Builder{}, interval: assistant.UpdateEvery(req.UpdateInterval)}
		s.stream(w, r, c, st)
		return
	}
	res, err := s.svc.Run(r.Context(), c, nil)
	if err != nil {
		s.domainError(w, r, err)
		return
	}
	out := wireCompletion{Created: created, Model: model, Object: "chat.completion", Usage: toWireUsage(res.Usage)}
	for _, ch := range res.Choices {
		msg := wireChoiceMessage{Content: ch.Text, Role: "assistant", FunctionCall: toWireCall(ch.FunctionCall), FunctionsStateID: ch.FunctionsStateID}
		out.Choices = append(out.Choices, wireChoice{msg, ch.Index, ch.FinishReason})
	}
	writeJSON(w, http.StatusOK, out)
}

// sseStream writes one chat completion as server-sent events. The response
// starts lazily with the first event, so errors found before any text (the
// context window, a busy engine) still go out as a JSON error (reference
// §3.4 rule 2).
type sseStream struct {
	w        http.ResponseWriter
	r        *http.Request // for web.InOneWrite
	created  int64
	model    string
	interval time.Duration // update_interval: deltas are batched meanwhile
	started  bool
	last     time.Time
	roleSent map[int]bool
	pending  map[int]*strings.Builder
	failed   error
}

func (st *sseStream) start() {
	if st.started {
		return
	}
	st.started = true
	web.LiftWriteDeadline(st.w)
	h := st.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	// An nginx in front (the reverse proxy --trusted-proxies names) buffers
	// an answer by default and passes it on as its buffers fill, so an
	// event could reach the client in two reads, which the npm client
	// cannot parse (rule 4). This header turns its buffering off for the
	// stream alone; other proxies ignore it.
	h.Set("X-Accel-Buffering", "no")
	st.w.WriteHeader(http.StatusOK)
}

// write sends one event as one write and one flush, gathered into one
// write on the socket (web.InOneWrite; net/http alone sends an event over
// its 4 KiB buffer in pieces): the npm client parses every TCP read on its
// own and crashes on a split event (rule 4). Events grow past 4 KiB with
// update_interval, n > 1 or a long function call's arguments.
func (st *sseStream) write(payload []byte) error {
	return web.InOneWrite(st.r, func() error {
		st.start()
		buf := make([]byte, 0, len(payload)+8)
		buf = append(buf, "data: "...)
		buf = append(buf, payload...)
		buf = append(buf, "\n\n"...)
		if _, err := st.w.Write(buf); err != nil {
			return err
		}
		return http.NewResponseController(st.w).Flush()
	})
}

func (st *sseStream) event(choices []streamChoice, u *wireUsage) error {
	b, err := json.Marshal(streamEvent{Choices: choices, Created: st.created, Model: st.model, Object: "chat.completion", Usage: u})
	if err != nil {
		return err
	}
	return st.write(b)
}

func (st *sseStream) delta(index int, text string) streamChoice {
	d := streamDelta{Content: text}
	if !st.roleSent[index] {
		d.Role = "assistant"
		st.roleSent[index] = true
	}
	return streamChoice{Delta: d, Index: index}
}

// flush sends the buffered deltas, one choice entry per choice.
func (st *sseStream) flush() error {
	if len(st.pending) == 0 {
		return nil
	}
	var idx []int
	for i := range st.pending {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	var choices []streamChoice
	for _, i := range idx {
		choices = append(choices, st.delta(i, st.pending[i].String()))
	}
	clear(st.pending)
	st.last = time.Now()
	return st.event(choices, nil)
}

func (st *sseStream) emit(d assistant.Delta) error {
	if d.Text == "" {
		return nil
	}
	b := st.pending[d.Index]
	if b == nil {
		b = &strings.Builder{}
		st.pending[d.Index] = b
	}
	b.WriteString(d.Text)
	if st.interval > 0 && time.Since(st.last) < st.interval {
		return nil
	}
	if err := st.flush(); err != nil {
		st.failed = err
		return err
	}
	return nil
}

func (s *server) stream(w http.ResponseWriter, r *http.Request, c assistant.Chat, st *sseStream) {
	res, err := s.svc.Run(r.Context(), c, st.emit)
	switch {
	case err == nil:
	case st.failed != nil || r.Context().Err() != nil:
		// The client is gone; generation was stopped by the failed write or
		// the cancelled context and there is no one to tell.
		return
	case !st.started:
		s.domainError(w, r, err)
		return
	default:
		// An error after the first byte can only be reported in-band: a
		// final chunk with finish_reason "error", then [DONE] (rule 12).
		s.log.ErrorContext(r.Context(), "assistant: generation failed mid-stream", "err", err, "request_id", web.RequestID(r.Context()))
		// Text update_interval held back was generated before the
		// failure: it goes out first, as it would have without the
		// interval, and the final chunk's content stays empty (rule 7).
		if st.flush() != nil {
			return
		}
		var choices []streamChoice
		for i := range c.Request.N {
			ch := st.delta(i, "")
			ch.FinishReason = "error"
			choices = append(choices, ch)
		}
		_ = st.event(choices, toWireUsage(res.Usage))
		_ = st.write([]byte("[DONE]"))
		return
	}
	if err := st.flush(); err != nil {
		return
	}
	// A function call goes out whole in one delta of its own (rule 9),
	// before the final event that carries finish_reason and usage.
	var calls []streamChoice
	for _, ch := range res.Choices {
		if ch.FunctionCall != nil {
			c := st.delta(ch.Index, "")
			c.Delta.FunctionCall, c.Delta.FunctionsStateID = toWireCall(ch.FunctionCall), ch.FunctionsStateID
			calls = append(calls, c)
		}
	}
	if len(calls) > 0 {
		if err := st.event(calls, nil); err != nil {
			return
		}
	}
	var choices []streamChoice
	for _, ch := range res.Choices {
		c := st.delta(ch.Index, "")
		c.FinishReason = ch.FinishReason
		choices = append(choices, c)
	}
	if err := st.event(choices, toWireUsage(res.Usage)); err != nil {
		return
	}
	_ = st.write([]byte("[DONE]"))
}
