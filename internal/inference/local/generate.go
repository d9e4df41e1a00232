package local

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"partnerapi/internal/inference/model"
	"partnerapi/internal/inference/sampler"
	"partnerapi/internal/inference/tokenizer"
)

// Finish reasons of a completion.
const (
	FinishStop   = "stop"   // the model produced an end-of-generation token
	FinishLength = "length" // MaxTokens or the context window was reached
)

// GenerateParams controls one generation.
type GenerateParams struct {
	Temperature       float64 // < 0.001: greedy
	TopP              float64 // as sampler.Params.TopP
	TopPSet           bool    // as sampler.Params.TopPSet
	RepetitionPenalty float64
	Seed              uint64 // 0: a random seed
	MaxTokens         int    // per choice; ≤ 0: until the context is full
	N                 int    // choices, ≥ 1
	MaxContext        int    // tokens per sequence; 0: the model's trained context
	// Continuation keeps the leading space of the first generated piece (raw
	// prompt continuation); chat replies drop it.
	Continuation bool
	// IgnoreEOS keeps sampling past end-of-generation tokens until
	// MaxTokens, as benchmarks do so that every run has the same length.
	IgnoreEOS bool
}

// Completion is one generated choice.
type Completion struct {
	Tokens       []int // generated ids, without the end-of-generation token
	Text         string
	FinishReason string
}

// prefillStep bounds the prompt tokens processed between cancellation
// checks, and the scheduler's prefill chunk while no stream is decoding.
const prefillStep = 64

// prefillStepBusy is the smallest prefill chunk of the scheduler while other
// streams are decoding (prefillpacer.go sizes it from the steps' times):
// they wait for it before their next token, and on the largest models a
// 64-token chunk would hold them up for about a second, while 16 tokens
// still share each weight read widely enough to keep prefill compute-bound.
const prefillStepBusy = 16

// Generate runs the prompt once, then samples p.N choices from copies of its
// KV cache, one token of each choice per batched step, so streamed choices
// progress together. emit receives every piece of text (never a split UTF-8
// character) in order per choice; an emit error stops generation. ctx is
// checked between tokens.
func (m *Model) Generate(ctx context.Context, prompt []int, p GenerateParams, emit func(choice int, text string) error) ([]Completion, error) {
	seq := m.Net.NewSequence(p.MaxContext)
	// The cache goes back to the model's pool at once, not when the
	// collector finds the sequence gone.
	defer seq.Release()
	out, _, err := m.generate(ctx, seq, prompt, p, emit)
	return out, err
}

// generate is Generate on a sequence that already holds
// prompt[:seq.Pos()] (a cached prefix; Pos must be below len(prompt)). It
// returns the tokens whose keys and values the first choice's sequence (seq)
// holds afterwards, for reuse by a later prompt with the same prefix.
func (m *Model) generate(ctx context.Context, seq *model.Sequence, prompt []int, p GenerateParams, emit func(choice int, text string) error) ([]Completion, []int, error) {
	if len(prompt) == 0 {
		return nil, nil, errors.New("local: empty prompt")
	}
	if seq.Pos() >= len(prompt) {
		return nil, nil, errors.New("local: the cached prefix must leave a prompt token to run")
	}
	n := max(p.N, 1)
	if len(prompt) >= seq.MaxContext() {
		return nil, nil, fmt.Errorf("%w: prompt of %d tokens, context of %d", model.ErrContextFull, len(prompt), seq.MaxContext())
	}
	var logits []float32
	for i := seq.Pos(); i < len(prompt); i += prefillStep {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		var err error
		if logits, err = seq.Forward(prompt[i:min(i+prefillStep, len(prompt))]); err != nil {
			return nil, nil, err
		}
	}
	seed := p.Seed
	if seed == 0 {
		seed = rand.Uint64()
	}
	maxTokens := seq.MaxContext() - len(prompt)
	if p.MaxTokens > 0 {
		maxTokens = min(maxTokens, p.MaxTokens)
	}

	type choice struct {
		seq     *model.Sequence
		logits  []float32
		sampler *sampler.Sampler
		decoder *tokenizer.StreamDecoder
		history []int
		out     Completion
		text    []byte
		done    bool
	}
	choices := make([]*choice, n)
	// The other choices' copies of the cache are this call's own.
	defer func() {
		for _, c := range choices[1:] {
			if c != nil {
				c.seq.Release()
			}
		}
	}()
	for i := range choices {
		c := &choice{
			sampler: sampler.New(sampler.Params{Temperature: p.Temperature, TopP: p.TopP, TopPSet: p.TopPSet, RepetitionPenalty: p.RepetitionPenalty, Seed: seed, Stream: uint64(i)}),
			history: slices.Clip(prompt),
		}
		if p.Continuation {
			c.decoder = m.Tokenizer.NewContinuationDecoder()
		} else {
			c.decoder = m.Tokenizer.NewStreamDecoder()
		}
		// The first choice keeps the prefilled sequence; the others copy it.
		if i == 0 {
			c.seq = seq
		} else {
			c.seq = seq.Clone()
		}
		c.logits = slices.Clone(logits)
		choices[i] = c
	}
	send := func(i int, c *choice, s string) error {
		if s == "" {
			return nil
		}
		c.text = append(c.text, s...)
		if emit != nil {
			return emit(i, s)
		}
		return nil
	}
	// Every round samples one token per unfinished choice, then advances
	// all of them with one batched step (the weights are read once for the
	// n choices).
	batch := m.Net.NewBatch()
	for {
		var seqs []*model.Sequence
		var toks []int
		var stepped []*choice
		for i, c := range choices {
			if c.done {
				continue
			}
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			tok := c.sampler.Sample(c.logits, c.history)
			finish := ""
			switch {
			case !p.IgnoreEOS && m.Tokenizer.IsEOG(tok):
				finish = FinishStop
			default:
				c.out.Tokens = append(c.out.Tokens, tok)
				c.history = append(c.history, tok)
				if err := send(i, c, c.decoder.Add(tok)); err != nil {
					return nil, nil, err
				}
				if len(c.out.Tokens) >= maxTokens {
					finish = FinishLength
				}
			}
			if finish != "" {
				if err := send(i, c, c.decoder.Flush()); err != nil {
					return nil, nil, err
				}
				c.out.FinishReason, c.done = finish, true
				continue
			}
			seqs, toks, stepped = append(seqs, c.seq), append(toks, tok), append(stepped, c)
		}
		if len(seqs) == 0 {
			break
		}
		out, err := batch.Step(seqs, toks)
		if err != nil {
			return nil, nil, err
		}
		for j, c := range stepped {
			copy(c.logits, out[j])
		}
	}
	out := make([]Completion, n)
	for i, c := range choices {
		out[i] = c.out
		out[i].Text = string(c.text)
	}
	return out, choices[0].history[:seq.Pos()], nil
}
