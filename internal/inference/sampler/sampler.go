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
	p       Params
	rng     *rand.Rand
	probs   []float64             // per token: its probability relative to the most probable's (0: underflow)
	vals    []float64             // selectCut: the probabilities of the bucket where the nucleus ends
	buckets *[bucketCount]float64 // selectCut's masses, made on the first top-p draw (33 kB)
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
	// Softmax at the temperature, in float64 for a stable cumulative sum;
	// a token whose probability underflows (or is NaN) is never drawn.
	maxLogit := float64(logits[Argmax(logits)])
	inv := 1 / s.p.Temperature
	if cap(s.probs) < len(logits) {
		s.probs = make([]float64, len(logits))
	}
	probs := s.probs[:len(logits)]
	var sum float64
	for id, l := range logits {
		p := math.Exp((float64(l) - maxLogit) * inv)
		if !(p > 0) {
			p = 0
		}
		probs[id] = p
		sum += p
	}
	r := s.rng.Float64()
	last := -1
	if s.p.TopP > 0 && s.p.TopP < 1 {
		cut, idCut, mass := s.nucleus(probs, s.p.TopP*sum)
		// The draw walks the nucleus in token order: the same
		// distribution as walking it most probable first, without
		// sorting it (a nucleus can hold most of a 150 000-token
		// vocabulary at a high temperature).
		r *= mass
		for id, p := range probs {
			if p > cut || (p == cut && id <= idCut) {
				if r -= p; r < 0 {
					return id
				}
				last = id
			}
		}
		return last
	}
	r *= sum
	for id, p := range probs {
		if p > 0 {
			if r -= p; r < 0 {
				return id
			}
			last = id
		}
	}
	return last
}

// nucleus finds the smallest set of most probable tokens (ties taken in
// token order) whose mass reaches want: those with a probability above cut,
// and those with one equal to cut up to token idCut. It returns the set's
// mass. The cut is found without sorting the probabilities (selectCut):
// the nucleus of a flat distribution over a large vocabulary is most of
// it, and the sort took 23–32 ms a token over 150 000 candidates
// (BenchmarkSampleTopP).
func (s *Sampler) nucleus(probs []float64, want float64) (cut float64, idCut int, mass float64) {
	cut = s.selectCut(probs, want)
	// The mass above the cut, then ties at the cut in token order until
	// the nucleus holds want.
	for _, p := range probs {
		if p > cut {
			mass += p
		}
	}
	idCut = -1
	for id, p := range probs {
		if p == cut {
			mass += p
			idCut = id
			if mass >= want {
				break
			}
		}
	}
	return cut, idCut, mass
}

// selectCut returns the probability v such that the values above v hold
// less than want and the values at or above v at least want (the last
// value the most-probable-first prefix needs) among the positive values of
// probs, probabilities relative to the most probable (in [0, 1]). A pass
// files each value's mass under its top bits (for positive floats the bit
// pattern orders like the value: its exponent and six bits of mantissa,
// everything below 2^-64 in one bucket), a walk down the buckets finds the
// one where the mass crosses want, and a selection among that bucket's
// values alone finds v: two passes with predictable branches instead of a
// selection over the whole vocabulary, whose comparisons of random
// probabilities the CPU could not predict.
func (s *Sampler) selectCut(probs []float64, want float64) float64 {
	if s.buckets == nil {
		s.buckets = new([bucketCount]float64)
	}
	mass := s.buckets
	clear(mass[:])
	for _, v := range probs {
		mass[bucketOf(v)] += v
	}
	above, crossing := 0.0, 0
	for k := len(mass) - 1; k >= 0; k-- {
		if above+mass[k] >= want {
			crossing = k
			break
		}
		above += mass[k]
	}
	in := s.vals[:0]
	smallest := 1.0
	for _, v := range probs {
		if v > 0 {
			smallest = min(smallest, v)
			if bucketOf(v) == crossing {
				in = append(in, v)
			}
		}
	}
	s.vals = in
	if len(in) == 0 { // rounding: the buckets held less than want
		return smallest
	}
	return selectFrom(in, above, want)
}

// bucketCount is selectCut's number of buckets: 65 exponents (2^-64 … 2^0)
// of 64 mantissa steps each, and one for everything smaller.
const bucketCount = 65*64 + 1

// bucketOf is the bucket of probability v ∈ [0, 1].
func bucketOf(v float64) int {
	b := math.Float64bits(v) >> (52 - 6) // exponent and six mantissa bits
	const low = (1023 - 64) << 6         // 2^-64
	if b < low {
		return 0
	}
	return min(int(b-low)+1, bucketCount-1)
}

// selectFrom is selectCut's answer among vals, the values of one bucket,
// when the values above the bucket hold above: a weighted quickselect that
// reorders vals.
func selectFrom(vals []float64, above, want float64) float64 {
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
