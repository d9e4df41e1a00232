// Package sampler picks the next token from logits: greedy argmax, or
// repetition penalty → temperature → top-p (nucleus) → a draw from a seeded
// RNG, in llama.cpp's order.
package sampler

import (
	"math"
	"math/rand/v2"
	"slices"

	"partnerapi/internal/inference/kernels"
)

// GreedyBelow is the temperature at or below which sampling is argmax.
const GreedyBelow = 0.001

// DefaultRepeatWindow is how many recent tokens the repetition penalty
// considers (llama.cpp's penalty_last_n default).
const DefaultRepeatWindow = 64

// Params configures a Sampler.
type Params struct {
	Temperature       float64 // ≤ GreedyBelow: argmax
	TopP              float64 // 0 or ≥ 1: no nucleus cut
	RepetitionPenalty float64 // 0 or 1: neutral; > 1 discourages repeats
	RepeatWindow      int     // recent tokens penalised; 0: DefaultRepeatWindow
	Seed              uint64
	Stream            uint64 // distinguishes choices that share a seed
}

// Sampler holds the RNG and scratch of one generated sequence. Not safe for
// concurrent use.
type Sampler struct {
	p     Params
	rng   *rand.Rand
	cands []candidate
}

type candidate struct {
	id int
	p  float64
}

// New returns a sampler; equal Params give equal draws.
func New(p Params) *Sampler {
	if p.RepeatWindow <= 0 {
		p.RepeatWindow = DefaultRepeatWindow
	}
	return &Sampler{p: p, rng: rand.New(rand.NewPCG(p.Seed, p.Stream^0x9e3779b97f4a7c15))}
}

// Greedy reports whether this sampler always takes the argmax.
func (s *Sampler) Greedy() bool { return s.p.Temperature <= GreedyBelow }

// Sample returns the next token id. history is the sequence so far (prompt
// and generated tokens); its last RepeatWindow entries are penalised. logits
// is modified in place by the repetition penalty.
func (s *Sampler) Sample(logits []float32, history []int) int {
	s.penalise(logits, history)
	if s.Greedy() {
		return Argmax(logits)
	}
	// Softmax at the temperature, in float64 for a stable cumulative sum.
	maxLogit := float64(logits[Argmax(logits)])
	inv := 1 / s.p.Temperature
	s.cands = s.cands[:0]
	var sum float64
	for id, l := range logits {
		p := math.Exp((float64(l) - maxLogit) * inv)
		if p > 0 {
			s.cands = append(s.cands, candidate{id, p})
			sum += p
		}
	}
	cands := s.cands
	if s.p.TopP > 0 && s.p.TopP < 1 {
		cands, sum = s.nucleus(cands, sum)
	}
	r := s.rng.Float64() * sum
	for _, c := range cands {
		r -= c.p
		if r < 0 {
			return c.id
		}
	}
	return cands[len(cands)-1].id
}

// nucleus returns the smallest set of most probable candidates whose mass
// reaches TopP (at least one), and its mass. Sorting a 150 000-token
// vocabulary every step is wasteful, so only candidates above a threshold
// are sorted; when they already hold TopP of the mass the nucleus lies
// among them (they are a prefix of the sorted order), else the threshold
// is lowered. Probabilities are relative to the top token's, which is 1.
func (s *Sampler) nucleus(all []candidate, sum float64) ([]candidate, float64) {
	want := s.p.TopP * sum
	top := all
	for threshold := 1e-3; ; threshold *= 1e-3 {
		if threshold < 1e-30 {
			top = all
			break
		}
		top = top[:0:0]
		var mass float64
		for _, c := range all {
			if c.p >= threshold {
				top = append(top, c)
				mass += c.p
			}
		}
		if mass >= want {
			break
		}
	}
	slices.SortFunc(top, func(a, b candidate) int {
		switch {
		case a.p > b.p:
			return -1
		case a.p < b.p:
			return 1
		}
		return a.id - b.id
	})
	limit, cum := len(top), 0.0
	for i, c := range top {
		cum += c.p
		if cum >= want {
			limit = i + 1
			break
		}
	}
	top = top[:limit]
	var mass float64
	for _, c := range top {
		mass += c.p
	}
	return top, mass
}

// penalise applies llama.cpp's repetition penalty once per distinct token in
// the recent window: positive logits are divided by the penalty, negative
// ones multiplied, so a penalty above 1 always makes the token less likely.
func (s *Sampler) penalise(logits []float32, history []int) {
	pen := float32(s.p.RepetitionPenalty)
	if pen <= 0 || pen == 1 || len(history) == 0 {
		return
	}
	recent := history[max(0, len(history)-s.p.RepeatWindow):]
	seen := make(map[int]struct{}, len(recent))
	for _, id := range recent {
		if id < 0 || id >= len(logits) {
			continue
		}
		if _, dup := seen[id]; dup {
			continue
		}
		seen[id] = struct{}{}
		if logits[id] > 0 {
			logits[id] /= pen
		} else {
			logits[id] *= pen
		}
	}
}

// Argmax returns the index of the largest logit (the first on ties; a NaN
// first logit wins, later NaNs never do), in the vector kernel where the CPU
// has it: greedy decoding scans the whole vocabulary for every token.
func Argmax(logits []float32) int { return kernels.Argmax(logits) }
