package local

import (
	"context"
	"errors"
	"fmt"
	"time"

	"partnerapi/internal/assistant"
)

// GenerateTokens runs one generation of the named model from prompt token
// ids through the model's scheduler, exactly as Generate runs a chat
// request (the same batch slots and bounded queue, continuous batching,
// chunked prefill, prefix reuse), but without a chat template or text:
// emit, when not nil, receives every sampled token id of every choice as
// the scheduler hands it over, on the caller's goroutine (the
// end-of-generation token is not reported). It returns the generated ids
// of each choice. Benchmarks and tools that bring their own token ids use
// it; p.MaxContext is the model's context window when 0 or larger, and
// p.MaxTokens is clamped to the room the prompt leaves.
func (e *Engine) GenerateTokens(ctx context.Context, name string, prompt []int, p GenerateParams, emit func(choice, tok int)) ([][]int, error) {
	var timed func(choice, tok int, _ time.Time)
	if emit != nil {
		timed = func(choice, tok int, _ time.Time) { emit(choice, tok) }
	}
	return e.GenerateTokensTimed(ctx, name, prompt, p, timed)
}

// GenerateTokensTimed is GenerateTokens with each token's emit also given
// the time the scheduler took it. The caller's goroutine runs when the Go
// scheduler lets it: while a step keeps both cores of a two-core host busy
// (the caller computing, the pool's worker spinning), tokens reach it in
// bursts, over half of a lone 15M stream's within 5 µs of the one before
// and then none for up to 17 ms, so a clock read there is off by that much;
// `bench engine` times its windows with these instead.
func (e *Engine) GenerateTokensTimed(ctx context.Context, name string, prompt []int, p GenerateParams, emit func(choice, tok int, at time.Time)) ([][]int, error) {
	s, ok := e.models[name]
	if !ok {
		return nil, assistant.ErrNoSuchModel
	}
	if len(prompt) == 0 {
		return nil, errors.New("local: empty prompt")
	}
	for _, t := range prompt {
		if t < 0 || t >= s.Net.NVocab {
			return nil, fmt.Errorf("local: token id %d out of range [0, %d)", t, s.Net.NVocab)
		}
	}
	if p.MaxContext <= 0 || p.MaxContext > s.info.ContextWindow {
		p.MaxContext = s.info.ContextWindow
	}
	room := p.MaxContext - len(prompt)
	if room < 1 {
		return nil, assistant.ErrContextWindow
	}
	if p.MaxTokens <= 0 || p.MaxTokens > room {
		p.MaxTokens = room
	}
	p.N = max(p.N, 1)
	release, err := s.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	r, err := s.submit(ctx, prompt, p)
	if err != nil {
		return nil, err
	}
	out := make([][]int, p.N)
	for i := range out {
		out[i] = make([]int, 0, p.MaxTokens)
	}
	err = r.follow(ctx, func(ev event) error {
		if ev.tok >= 0 {
			out[ev.choice] = append(out[ev.choice], ev.tok)
			if emit != nil {
				emit(ev.choice, ev.tok, ev.at)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
