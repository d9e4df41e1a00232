package upstream

import (
	"context"
	"strings"
	"time"

	"partnerapi/internal/assistant"
)

// A chat the client cuts short (a dropped stream, an abandoned request, a
// cancelled gRPC call) is billed for what it consumed (assistant/cut.go),
// but an upstream server stops when we close its stream and reports no
// usage for it. The service could count only the deltas it relayed, and a
// request that is not streamed relays none: abandoned mid-generation, it
// cost nothing. So the engine counts what it read from the upstream up to
// the cut, streamed to the client or not: the text and tool-call fragments
// of each choice, and the prompt, as the usage fallback counts a stream
// without usage. The request to the upstream always streams, so that read
// is there whether or not the client's answer is streamed, and no emit is
// needed for it: an emit would tell a pool that the answer reached the
// client and end its failover before the first delta.
//
// The prompt is billed only once the upstream streamed a token of the
// answer (text or a tool-call fragment), which proves it processed the
// prompt: a cut before that (while the server queued the request, say)
// bills nothing, as the service's own fallback rules.

// cutCountTimeout bounds the token counts of a cut generation: the
// upstream's tokenizer is a request away, and the client is gone already.
const cutCountTimeout = 5 * time.Second

// cutLimit is the most tokens a choice cut short is billed: the client's
// max_tokens, or the lower one the request was sent with (clamped to the
// upstream's context), since the upstream generates no more. Text read up
// to the cut may still count more by the tokenizer than the upstream
// generated, a tool call's fragments say, and the client was not promised
// a bill above its max_tokens. 0 is no limit.
func cutLimit(asked, sent int) int {
	switch {
	case sent > 0 && (asked <= 0 || sent < asked):
		return sent
	case asked > 0:
		return asked
	}
	return 0
}

// cutShort is what a stream read up to a cut: each choice's text, and its
// first tool call's fragments (the one finishCall would have assembled, so
// a cut bills no more of a call than its finished answer would) as they
// came.
func cutShort(out streamed, text []strings.Builder, calls []call) streamed {
	out.cut = true
	out.calls = make([]string, len(calls))
	for i := range out.choices {
		out.choices[i].Text = text[i].String()
		out.calls[i] = calls[i].name.String() + calls[i].args.String()
	}
	return out
}

// received reports whether the upstream streamed any of the answer.
func (s streamed) received() bool {
	for _, ch := range s.choices {
		if ch.Text != "" {
			return true
		}
	}
	for _, c := range s.calls {
		if c != "" {
			return true
		}
	}
	return s.usage != nil
}

// cutUsage is the usage of a generation the client cut short, from the
// streams it read up to the cut: none until one of them streamed some of
// the answer, then the prompt once and every choice's text and call
// fragments, each at most limit tokens. The counts are asked of the
// upstream's tokenizer on a context the cancellation does not end.
func (e *Engine) cutUsage(ctx context.Context, req assistant.GenerateRequest, limit int, parts []streamed) assistant.Usage {
	received := false
	for _, p := range parts {
		received = received || p.received()
	}
	if !received {
		return assistant.Usage{}
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cutCountTimeout)
	defer cancel()
	return e.usage(ctx, req, parts, limit)
}
