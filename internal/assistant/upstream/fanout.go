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
//
// Each of those requests is one the replica runs at once, so in a pool each
// holds a place under the replica's MaxInFlight (limit.go), not just the
// one the chat acquired. The chat's own place runs its choices one after
// the other, so every fanned-out chat makes progress whatever the others
// hold; a choice beyond it runs alongside only on a place the replica has
// free, which no queued request can use, when one of the chat's choices
// begins or ends (the chat is not told of places freed in between), and
// gives that place back when it ends. Nothing that holds a place therefore waits for
// another, so chats cannot deadlock each other however their choices
// interleave (two places, several chats of three choices), a chat of more
// choices than the limit still ends, and a chat already admitted does not
// take a freed place from a request waiting in the queue: under load its
// choices run one at a time, each choice going to the replica as the
// limit allows.

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
// extraSlots lends a fan-out places on its replica beyond the one its
// chat holds (limit.go): more takes one if the replica has room that no
// queued request can use, less gives one back. An engine outside a pool
// has none, and is limited by FanOut alone.
type extraSlots interface {
	more() bool
	less()
}

func (e *Engine) moreSlots() bool { return e.extra == nil || e.extra.more() }

func (e *Engine) lessSlots() {
	if e.extra != nil {
		e.extra.less()
	}
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
		// sched guards started, the choices begun so far (the next one
		// to begin is started), and running, the requests under way or
		// about to be (at most FanOut).
		sched   sync.Mutex
		started int
		running = 1 // the chat's own place
		fan     = max(e.FanOut, 1)
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
	choice := func(i int) {
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
		s, err := e.chat(ctx, one, 1, emitOne)
		if err != nil {
			if s.cut {
				// Kept for the bill, should the client be the one who
				// cut it.
				parts[i] = s
			}
			fail(err, s.cut)
			return
		}
		s.choices[0].Index = i
		parts[i] = s
	}
	// take begins the next choice, unless all have begun or a failure
	// ended the fan-out.
	take := func() (int, bool) {
		sched.Lock()
		defer sched.Unlock()
		if started == n || ctx.Err() != nil {
			return 0, false
		}
		started++
		return started - 1, true
	}
	// grow runs choices not yet begun alongside, each on a place of its
	// own, while FanOut and the replica allow.
	var grow func()
	grow = func() {
		for {
			sched.Lock()
			room := started < n && running < fan && ctx.Err() == nil
			if room {
				running++
			}
			sched.Unlock()
			if !room {
				return
			}
			var i int
			ok := e.moreSlots()
			if ok {
				if i, ok = take(); !ok {
					e.lessSlots()
				}
			}
			if !ok {
				sched.Lock()
				running--
				sched.Unlock()
				return
			}
			wg.Go(func() {
				choice(i)
				// The place goes back at once, to the queue first;
				// grow takes it again only if no one there can use it.
				e.lessSlots()
				sched.Lock()
				running--
				sched.Unlock()
				grow()
			})
		}
	}
	wg.Go(func() {
		// The chat's own place runs choices until none is left to
		// begin, so the chat ends whatever places grow finds.
		for {
			i, ok := take()
			if !ok {
				return
			}
			grow()
			choice(i)
		}
	})
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
