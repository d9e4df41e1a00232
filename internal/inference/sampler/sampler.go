// Package sampler picks the next token from logits: greedy argmax, or
// repetition penalty → temperature → top-p (nucleus) → a draw from a seeded
// RNG, in llama.cpp's order.
package sampler

import (
	"math"
	"math/rand/v2"

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
	vals  []float64 // nucleus: the candidates' probabilities, reordered by selection
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
	r := s.rng.Float64()
	if s.p.TopP > 0 && s.p.TopP < 1 {
		cut, idCut, mass := s.nucleus(cands, s.p.TopP*sum)
		// The draw walks the nucleus in token order: the same
		// distribution as walking it most probable first, without
		// sorting it (a nucleus can hold most of a 150 000-token
		// vocabulary at a high temperature).
		r *= mass
		last := -1
		for _, c := range cands {
			if c.p > cut || (c.p == cut && c.id <= idCut) {
				if r -= c.p; r < 0 {
					return c.id
				}
				last = c.id
			}
		}
		return last
	}
	r *= sum
	for _, c := range cands {
		r -= c.p
		if r < 0 {
			return c.id
		}
	}
	return cands[len(cands)-1].id
}

// nucleus finds the smallest set of most probable candidates (ties taken
// in token order) whose mass reaches want: those with p above cut, and
// those with p equal to cut up to token idCut. It returns the set's mass.
// The cut is found by selection over the probabilities, expected linear
// time, instead of sorting them: the nucleus of a flat distribution over
// a large vocabulary is most of it, and the sort took 12 ms a token over
// 150 000 candidates (BenchmarkSampleTopP).
func (s *Sampler) nucleus(cands []candidate, want float64) (cut float64, idCut int, mass float64) {
	vals := s.vals[:0]
	for _, c := range cands {
		vals = append(vals, c.p)
	}
	s.vals = vals
	cut = selectCut(vals, want)
	// The mass above the cut, then ties at the cut in token order until
	// the nucleus holds want.
	for _, c := range cands {
		if c.p > cut {
			mass += c.p
		}
	}
	idCut = -1
	for _, c := range cands {
		if c.p == cut {
			mass += c.p
			idCut = c.id
			if mass >= want {
				break
			}
		}
	}
	return cut, idCut, mass
}

// selectCut returns the probability v such that the values above v hold
// less than want and the values at or above v at least want (the last
// value the most-probable-first prefix needs), by a weighted quickselect
// that reorders vals. If the values together hold less than want (rounding)
// it returns the smallest.
func selectCut(vals []float64, want float64) float64 {
	above := 0.0 // mass of the values known to lie above vals
	for len(vals) > 1 {
		pivot := median3(vals[0], vals[len(vals)/2], vals[len(vals)-1])
		// Three-way partition: greater | equal | less.
		gt, lt := 0, len(vals)
		var mGreater, mEqual float64
		for i := 0; i < lt; {
			switch v := vals[i]; {
			case v > pivot:
				vals[gt], vals[i] = vals[i], vals[gt]
				mGreater += v
				gt++
				i++
			case v < pivot:
				lt--
				vals[lt], vals[i] = vals[i], vals[lt]
			default:
				mEqual += v
				i++
			}
		}
		switch {
		case above+mGreater >= want:
			vals = vals[:gt]
		case above+mGreater+mEqual >= want:
			return pivot
		default:
			above += mGreater + mEqual
			vals = vals[lt:]
		}
		if len(vals) == 0 {
			return pivot
		}
	}
	return vals[0]
}

func median3(a, b, c float64) float64 {
	if a > b {
		a, b = b, a
	}
	if b > c {
		b = c
	}
	if a > b {
		return a
	}
	return b
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

// Argmax returns the index of the largest logit (the first on ties). NaNs
// never win, except a NaN first logit, which nothing compares greater
// than; +0 and -0 tie. The scan is a kernel (vector passes where the CPU
// has them): a greedy step reads the whole vocabulary per stream.
func Argmax(logits []float32) int { return kernels.ArgmaxF32(logits) }
