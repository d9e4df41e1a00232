package assistant

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"
)

// A generation the client cuts short (a dropped stream, an abandoned
// request, a cancelled gRPC call, its deadline) still ran on our hardware:
// the prompt was processed and tokens were generated. It is billed for what
// it consumed, or a prepaid client could use the engine for free by hanging
// up just before the end. A generation that fails on our side is not
// billed: the customer did not get what was asked for, and the fault is
// ours.

// cutMeter relays a stream's deltas to the transport and remembers the
// text that went through it and whether the transport failed to deliver
// it, which is the client gone: the transports' emit only fails on a
// write to the client.
type cutMeter struct {
	emit func(Delta) error

	// mu serialises the relay: an engine may call it from several
	// goroutines (an upstream fanning out n choices serialises its own
	// calls, but the meter does not rely on that).
	mu   sync.Mutex
	text map[int]*strings.Builder
	gone bool
}

// newCutMeter wraps emit; with no emit (a response that is not streamed)
// there is nothing to relay or count, and the meter is nil. Passing an
// engine an emit of our own would tell it the answer is streamed: an
// upstream pool fails a request over to another replica only while no
// delta has been emitted.
func newCutMeter(emit func(Delta) error) *cutMeter {
	if emit == nil {
		return nil
	}
	return &cutMeter{emit: emit, text: map[int]*strings.Builder{}}
}

// relayFunc is the emit the engine gets.
func (m *cutMeter) relayFunc() func(Delta) error {
	if m == nil {
		return nil
	}
	return m.relay
}

func (m *cutMeter) relay(d Delta) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.text[d.Index]
	if b == nil {
		b = &strings.Builder{}
		m.text[d.Index] = b
	}
	b.WriteString(d.Text)
	if err := m.emit(d); err != nil {
		m.gone = true
		return err
	}
	return nil
}

// clientGone reports whether a generation that ended with err was cut
// short by the client: its context was cancelled or ran out (a gRPC
// client's deadline) and the engine stopped for it, or the transport could
// not write a delta to it. Anything else is a failure of ours.
func (m *cutMeter) clientGone(ctx context.Context, err error) bool {
	if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return true
	}
	if m == nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.gone
}

// texts returns the text relayed per choice, in no particular order.
func (m *cutMeter) texts() []string {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, 0, len(m.text))
	for _, b := range m.text {
		if b.Len() > 0 {
			out = append(out, b.String())
		}
	}
	return out
}

// countTimeout bounds the token counts of a cut generation's fallback: an
// upstream's tokenizer is a request away, and the client is gone already.
const countTimeout = 5 * time.Second

// cutUsage is the usage of a generation the client cut short. The engine's
// own count wins: the local engine reports the prompt tokens it computed
// and every token generated up to the cut, and the upstream engine what it
// read of its server's stream up to the cut (upstream/cut.go), streamed to
// the client or not, so an abandoned request that is not streamed is
// billed too. An engine that reports nothing on a cut is counted from the
// deltas relayed: their text with the model's tokenizer (about 4 bytes a
// token when it cannot count), and the prompt as the messages' text
// without the chat template's own tokens, as the upstream engine counts a
// prompt whose server reports no usage. The prompt is billed only once a
// delta proves the backend processed it, and the count never exceeds
// max_tokens per choice; such an engine's request that is not streamed
// relays no deltas (see newCutMeter) and is billed nothing.
func (s *Service) cutUsage(ctx context.Context, req GenerateRequest, reported Usage, m *cutMeter) Usage {
	if reported != (Usage{}) {
		return reported
	}
	texts := m.texts()
	if len(texts) == 0 {
		return Usage{}
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), countTimeout)
	defer cancel()
	count := func(text string) int {
		n, err := s.engine.CountTokens(ctx, req.Model, text)
		if err != nil {
			return (len(text) + 3) / 4
		}
		return n
	}
	var u Usage
	for _, t := range texts {
		u.CompletionTokens += min(count(t), max(req.MaxTokens, 1))
	}
	var prompt strings.Builder
	for _, msg := range req.Messages {
		prompt.WriteString(msg.Content)
		if msg.FunctionCall != nil {
			prompt.WriteString(msg.FunctionCall.Name)
			prompt.Write(msg.FunctionCall.Arguments)
		}
		prompt.WriteByte('\n')
	}
	u.PromptTokens = count(prompt.String())
	return u
}
