package local

import "time"

// While streams decode, a joining prompt's tokens ride in their steps, and
// every prompt row adds to the time the streams wait for their next token.
// One fixed chunk cannot suit every model: 16 prompt tokens add ~27 ms to a
// ten-stream step of Qwen2.5-0.5B on two cores but ~1 ms to one of
// stories15M, whose ten simultaneous prompts were then prefilled at half
// the rate of a lone one (`bench engine`, Zen 4 host: 8 781 against
// 17 524 tok/s), the last stream's first token waiting twice as long. So
// the chunk is sized by time: a step that carries prompt tokens besides
// decoding streams may take DefaultJoinStep (Options.JoinStep) or twice a
// decode-only step, whichever is longer, and the chunk is what fits in that
// at the cost per prompt token measured in earlier steps. The larger models keep
// prefillStepBusy tokens (the floor), the smaller ones join in a few steps.
// A token's result does not depend on the chunk it is prefilled in (the
// model's steps are batch-invariant), so the timing-dependent chunk changes
// when streams join, never what they generate.

// prefillBusyMax bounds the chunk however cheap a token is (a cancelled
// request's chunk still runs to the end of its step).
const prefillBusyMax = 512

// prefillPacer measures steps and sizes the prompt chunk of busy ones.
type prefillPacer struct {
	decode time.Duration // moving average of decode-only steps
	perTok time.Duration // moving average of a prompt token's cost in a step
	floor  time.Duration // the step time allowed
	fixed  int           // a chunk of this size whatever the times, if set
}

// pacerFor is the pacer of Options.JoinStep: zero the default step,
// negative fixed chunks of prefillStepBusy tokens.
func pacerFor(joinStep time.Duration) prefillPacer {
	switch {
	case joinStep > 0:
		return prefillPacer{floor: joinStep}
	case joinStep < 0:
		return prefillPacer{fixed: prefillStepBusy}
	}
	return prefillPacer{floor: DefaultJoinStep}
}

// ewma moves avg a quarter of the way to x (to x itself when avg is unset).
func ewma(avg, x time.Duration) time.Duration {
	if avg == 0 {
		return x
	}
	return avg + (x-avg)/4
}

// observe records a step of nDecode decoding rows and prompt prompt tokens
// that took el.
func (p *prefillPacer) observe(el time.Duration, nDecode, prompt int) {
	switch {
	case prompt == 0 && nDecode > 0:
		p.decode = ewma(p.decode, el)
	case prompt > 0:
		// A busy step's prompt tokens cost what the step took beyond a
		// decode-only one; before any decode-only step is measured the
		// whole step is charged to them, which errs towards small chunks.
		extra := el
		if nDecode > 0 {
			extra -= p.decode
		}
		// (+1 ns: a zero average means none measured yet.)
		p.perTok = ewma(p.perTok, max(extra, 0)/time.Duration(prompt)+1)
	}
}

// budget is the prompt tokens the next step may take while streams decode.
func (p *prefillPacer) budget() int {
	if p.fixed > 0 {
		return p.fixed
	}
	if p.perTok == 0 {
		return prefillStepBusy
	}
	avail := max(p.floor, 2*p.decode) - p.decode
	return int(min(max(int64(avail/p.perTok), prefillStepBusy), prefillBusyMax))
}
