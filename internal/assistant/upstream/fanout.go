package upstream

import (
	"context"
	"errors"
	"sync"

	"partnerapi/internal/assistant"
)

// A request for n > 1 choices (reference §3.2: 1..4) cannot simply be
// passed on: llama-server refuses n != 1 with a 400 ("Only one completion
// choice is allowed") and Ollama ignores n, answering choice 0 alone
// (inference reference §9). Only vLLM generates the n choices of one
// request itself, sharing the prompt's KV, so it is still asked once; every
// other upstream gets n requests of one choice each, run concurrently (at
// most FanOut at a time), their deltas merged by choice index as the local
// engine emits them. The first failure cancels the others.

// errOneChoice is an upstream's refusal of n != 1. It never leaves the
// package: the request is fanned out instead.
var errOneChoice = errors.New("the upstream generates one choice a request")

// answersN reports whether the upstream generates n > 1 choices of model
// in one request: its model list looked like vLLM's and it has not
// refused n since.
func (e *Engine) answersN(ctx context.Context, model string) bool {
	if _, err := e.Models(ctx); err != nil {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return !e.oneChoice && e.remotes[e.remote(model)].nativeN
}

// fanOut generates req.N choices as req.N requests of one choice each.
// Choice i gets the seed req.Seed+i: one seed for all would make a seeded
// request's choices identical, while the local engine draws each choice
// from its own stream of the one seed.
//
// A fan-out the client cuts short (its context ends, or a choice's delta
// cannot be delivered) returns the usage of every choice's stream up to
// the cut, each at most limit tokens; one that fails on a choice's own
// error returns none, as the siblings' cut is ours.
func (e *Engine) fanOut(parent context.Context, req assistant.GenerateRequest, limit int, emit func(assistant.Delta) error) (assistant.Result, error) {
	n := req.N
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	var (
		mu       sync.Mutex // guards first and firstCut, and serialises emit
		first    error
		firstCut bool // first is a cut by the client
		wg       sync.WaitGroup
		parts    = make([]streamed, n)
		slots    = make(chan struct{}, max(e.FanOut, 1))
	)
	fail := func(err error, cut bool) {
		mu.Lock()
		defer mu.Unlock()
		if first == nil {
			// The siblings' own errors are the cancellation this
			// causes; the first failure is the one to report.
			first, firstCut = err, cut
			cancel()
		}
	}
	for i := range n {
		one := req
		one.N = 1
		if one.Seed != 0 {
			one.Seed += uint64(i)
		}
		var emitOne func(assistant.Delta) error
		if emit != nil {
			// The transports' emit is not safe for concurrent use, and a
			// delta must not follow a failure the caller will report.
			emitOne = func(d assistant.Delta) error {
				mu.Lock()
				defer mu.Unlock()
				if err := ctx.Err(); err != nil {
					return err
				}
				return emit(assistant.Delta{Index: i, Text: d.Text})
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case slots <- struct{}{}:
				defer func() { <-slots }()
			case <-ctx.Done():
				return
			}
			s, err := e.chat(ctx, one, 1, emitOne)
			if err != nil {
				if s.cut {
					// Kept for the bill, should the client be the
					// one who cut it.
					parts[i] = s
				}
				fail(err, s.cut)
				return
			}
			s.choices[0].Index = i
			parts[i] = s
		}()
	}
	wg.Wait()
	if err := parent.Err(); err != nil {
		return assistant.Result{Usage: e.cutUsage(parent, req, limit, parts)}, err
	}
	if first != nil {
		if firstCut {
			return assistant.Result{Usage: e.cutUsage(parent, req, limit, parts)}, first
		}
		return assistant.Result{}, first
	}
	res := assistant.Result{Choices: make([]assistant.Choice, 0, n), Usage: e.usage(parent, req, parts, 0)}
	for _, p := range parts {
		res.Choices = append(res.Choices, p.choices...)
	}
	return res, nil
}
