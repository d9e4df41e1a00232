package local

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"partnerapi/internal/assistant"
	"partnerapi/internal/inference/model"
	"partnerapi/internal/inference/tokenizer"
)

// The caller's side of a generation: a request goes to the scheduler, which
// pushes the sampled tokens back as events; the caller's goroutine turns
// them into text (or token ids) and emits them.

// event is one sampled token of one choice (tok < 0: none) and, on the
// choice's last event, why it finished.
type event struct {
	choice int
	tok    int
	finish string
	at     time.Time // when the scheduler took the token (GenerateTokensTimed)
}

// request is one Generate call as the scheduler sees it.
type request struct {
	prompt    []int
	params    GenerateParams
	maxTokens int

	cancelled atomic.Bool   // set by the caller; the scheduler drops it at the next step
	notify    chan struct{} // capacity 1: "events are pending"
	left      chan struct{} // closed when the scheduler has let go of the request

	mu      sync.Mutex
	pending []event

	// Written by the scheduler before left is closed.
	precached int
	err       error
	// generated counts the tokens the scheduler took for the request, all
	// choices together and ends of generation excluded, whether or not the
	// caller saw them: a request cut short is billed for them (consumed).
	generated int
	// cutInPrefill is set when a cancellation took the request out before
	// its prompt was done; prefilled is then how much of the prompt was in
	// its KV cache (the prefix taken from the prefix cache included).
	cutInPrefill bool
	prefilled    int
}

func (r *request) push(ev event) {
	r.mu.Lock()
	r.pending = append(r.pending, ev)
	r.mu.Unlock()
	select {
	case r.notify <- struct{}{}:
	default:
	}
}

// drain takes the pending events; spare (a slice drain returned before,
// whose events have been handled) becomes the new pending buffer, so a
// stream swaps two buffers instead of allocating per token.
func (r *request) drain(spare []event) []event {
	r.mu.Lock()
	defer r.mu.Unlock()
	evs := r.pending
	r.pending = spare[:0]
	return evs
}

// cutPrefill records, on the scheduler's goroutine, that the request was
// cancelled while its prompt was still being prefilled; seq is nil when it
// had not been given a sequence yet, so nothing of the prompt was computed.
func (r *request) cutPrefill(seq *model.Sequence) {
	r.cutInPrefill = true
	if seq != nil {
		r.prefilled = seq.Pos()
	}
}

// consumed is the usage of a request that ended early, once the scheduler
// has let go of it: the prompt tokens computed (all of them unless it was
// cut while prefilling) and every token generated up to the cut. The
// precached tokens are counted as a finished request counts them, so the
// billable tokens are the ones this request made the model compute.
func (r *request) consumed() assistant.Usage {
	prompt := len(r.prompt)
	if r.cutInPrefill {
		prompt = min(r.prefilled, prompt)
	}
	return assistant.Usage{PromptTokens: prompt, CompletionTokens: r.generated, PrecachedPromptTokens: min(r.precached, prompt)}
}

// submit hands a new request to the scheduler, which lets it join the
// batch at its next step.
func (s *served) submit(ctx context.Context, prompt []int, p GenerateParams) (*request, error) {
	r := &request{prompt: prompt, params: p, maxTokens: p.MaxTokens,
		notify: make(chan struct{}, 1), left: make(chan struct{})}
	select {
	case s.sched.submit <- r:
		return r, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-s.sched.quit:
		return nil, errors.New("local: engine closed")
	}
}

// follow hands the request's events to onEvent on the caller's goroutine,
// in order, until the scheduler lets go of the request, and returns the
// request's error. Cancelling ctx or an onEvent error takes the request out
// of the batch at the next step; follow returns once the scheduler has let
// go of it, so its KV memory is released by then.
func (r *request) follow(ctx context.Context, onEvent func(event) error) error {
	abort := func(err error) error {
		r.cancelled.Store(true)
		<-r.left
		return err
	}
	var spare []event
	for finished := false; !finished; {
		select {
		case <-r.notify:
		case <-r.left:
			finished = true
		case <-ctx.Done():
			return abort(ctx.Err())
		}
		evs := r.drain(spare)
		for _, ev := range evs {
			if err := onEvent(ev); err != nil {
				return abort(err)
			}
		}
		spare = evs
	}
	return r.err
}

// run submits one generation to the scheduler and turns its tokens into
// text on the caller's goroutine: decoding and emitting (which may block on
// a slow client) never hold up the batch.
func (s *served) run(ctx context.Context, start time.Time, prompt []int, p GenerateParams, emit func(assistant.Delta) error) (assistant.Result, error) {
	r, err := s.submit(ctx, prompt, p)
	if err != nil {
		return assistant.Result{}, err
	}
	type choiceOut struct {
		dec    *tokenizer.StreamDecoder
		text   strings.Builder
		tokens int
		finish string
	}
	outs := make([]choiceOut, max(p.N, 1))
	for i := range outs {
		outs[i].dec = s.Tokenizer.NewStreamDecoder()
	}
	send := func(i int, text string) error {
		if text == "" {
			return nil
		}
		outs[i].text.WriteString(text)
		if emit == nil {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		return emit(assistant.Delta{Index: i, Text: text})
	}
	first := true
	err = r.follow(ctx, func(ev event) error {
		if first {
			// The first event is the first token sampled (an end of
			// generation included, which has no time of its own).
			first = false
			at := ev.at
			if at.IsZero() {
				at = time.Now()
			}
			s.ttft.Observe(at.Sub(start))
		}
		o := &outs[ev.choice]
		if ev.tok >= 0 {
			o.tokens++
			if err := send(ev.choice, o.dec.Add(ev.tok)); err != nil {
				return err
			}
		}
		if ev.finish != "" {
			o.finish = ev.finish
			return send(ev.choice, o.dec.Flush())
		}
		return nil
	})
	if err != nil {
		// The scheduler has let go of the request (follow waits for it),
		// so what it consumed is final: the service bills it when the
		// client cut the generation short, and drops it for our failures.
		return assistant.Result{Usage: r.consumed()}, err
	}
	res := assistant.Result{Usage: assistant.Usage{PromptTokens: len(prompt), PrecachedPromptTokens: r.precached}}
	for i := range outs {
		res.Choices = append(res.Choices, assistant.Choice{Index: i, Text: outs[i].text.String(), FinishReason: outs[i].finish})
		res.Usage.CompletionTokens += outs[i].tokens
	}
	return res, nil
}
