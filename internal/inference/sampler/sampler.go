// Package sampler picks the next token from logits: greedy argmax, or
// repetition penalty → temperature → top-p (nucleus) → a draw from a seeded
// RNG, in llama.cpp's order. Greedy is pure argmax: the repetition penalty
// belongs to the sampled chain only (inference.md §6).
package sampler

import (
	"math"
	"math/rand/v2"

	"partnerapi/internal/inference/kernels"
)

// GreedyBelow is the temperature below which sampling is argmax: "0 (or
// < 0.001) = greedy" (assistant reference §3.2, inference.md §6). At 0.001
// itself the draw is a draw, nearly always of the argmax.
const GreedyBelow = 0.001

// DefaultRepeatWindow is how many recent tokens the repetition penalty
// considers (llama.cpp's penalty_last_n default).
const DefaultRepeatWindow = 64

// Params configures a Sampler.
type Params struct {
	Temperature       float64 // < GreedyBelow: argmax
	TopP              float64 // ≥ 1, or 0 while TopPSet is false: no nucleus cut
	TopPSet           bool    // TopP was given: 0 keeps the most probable token alone (after the penalty), as in llama.cpp
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
	probs   []float32             // per token: its probability (0: underflow)
	vals    []float32             // nucleus: the probabilities of the bucket where the nucleus ends (room for all)
	buckets *[bucketCount]float64 // nucleus's masses, made on the first top-p draw (33 kB)
}

// New returns a sampler; equal Params give equal draws.
func New(p Params) *Sampler {
	if p.RepeatWindow <= 0 {
		p.RepeatWindow = DefaultRepeatWindow
	}
	return &Sampler{p: p, rng: rand.New(rand.NewPCG(p.Seed, p.Stream^0x9e3779b97f4a7c15))}
}

// Greedy reports whether this sampler always takes the argmax.
func (s *Sampler) Greedy() bool { return s.p.Temperature < GreedyBelow }

// Sample returns the next token id. history is the sequence so far (prompt
// and generated tokens); when sampling, its last RepeatWindow entries are
// penalised and logits is modified in place by the penalty.
func (s *Sampler) Sample(logits []float32, history []int) int {
	// Temperature 0 is the client asking for the model's argmax, which the
	// API's default repetition penalty (1.07) must not change: reference §6
	// takes the greedy branch before the penalty, as llama.cpp's greedy
	// sampler does.
	if s.Greedy() {
		return Argmax(logits)
	}
	s.penalise(logits, history)
	if s.p.TopPSet && s.p.TopP <= 0 {
		// A nucleus of no mass still holds its most probable token; the
		// temperature does not change which one that is.
		return Argmax(logits)
	}
	// A NaN or infinite logit (a broken model's) makes the vector sum NaN or
	// infinite; the vector exponential would clamp it into a drawable
	// probability, so such logits are made harmless first.
	if t := kernels.SumF32(logits); t != t || math.IsInf(float64(t), 0) {
		sanitise(logits)
		if top := Argmax(logits); math.IsInf(float64(logits[top]), -1) {
			return top // nothing is possible: the first token, as greedy would
		}
	}
	probs := s.softmax(logits)
	// Without a nucleus every positive probability is drawable: a cut at
	// zero with no ties.
	var cut float32
	var ties int
	var mass float64
	if s.p.TopP > 0 && s.p.TopP < 1 {
		cut, ties, mass = s.nucleus(probs, s.p.TopP)
	} else {
		mass = sum64(probs)
	}
	if !(mass > 0) || math.IsInf(mass, 0) {
		return Argmax(logits) // not expected after sanitise
	}
	// The draw walks the nucleus in token order: the same distribution as
	// walking it most probable first, without sorting it (a nucleus can
	// hold most of a 150 000-token vocabulary at a high temperature).
	r := s.rng.Float64() * mass
	last := -1
	for id, p := range probs {
		if p > cut || (p == cut && ties > 0) {
			if p == cut {
				ties--
			}
			if r -= float64(p); r < 0 {
				return id
			}
			last = id
		}
	}
	return last
}

// softmax sets the sampler's probabilities to the softmax of logits at the
// temperature and returns them. The exponentials are the kernels' float32
// vector ones: over a 150 000-token vocabulary math.Exp in float64 took
// ~1.2 ms a token, most of a sampled token's cost then (BenchmarkSampleTopP).
// A token whose probability underflows is never drawn.
func (s *Sampler) softmax(logits []float32) []float32 {
	if cap(s.probs) < len(logits) {
		s.probs = make([]float32, len(logits))
	}
	probs := s.probs[:len(logits)]
	clear(probs)
	kernels.AxpyF32(probs, float32(1/s.p.Temperature), logits)
	kernels.Softmax(probs)
	return probs
}

// sum64 is the sum of probs in float64, in four sums so that the additions
// do not wait on each other.
func sum64(probs []float32) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(probs); i += 4 {
		s0 += float64(probs[i])
		s1 += float64(probs[i+1])
		s2 += float64(probs[i+2])
		s3 += float64(probs[i+3])
	}
	for ; i < len(probs); i++ {
		s0 += float64(probs[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// sanitise makes a NaN logit never drawn and a +Inf one 1e30, far above
// any real logit yet finite even divided by the smallest temperature, so
// that it takes (or shares) all the probability.
func sanitise(logits []float32) {
	for i, l := range logits {
		switch {
		case l != l:
			logits[i] = float32(math.Inf(-1))
		case l > 1e30:
			logits[i] = 1e30
		}
	}
}

// nucleus finds the smallest set of most probable tokens (ties taken in
// token order) whose mass reaches topP of the total: those with a
// probability above cut and the first ties (in token order) with a
// probability equal to cut. It returns the set's mass, which is not
// positive only when no token has a positive probability. The cut is found
// without sorting the probabilities: the nucleus of a flat distribution over
// a large vocabulary is most of it, and the sort took 23–32 ms a token over
// 150 000 candidates (BenchmarkSampleTopP). A pass files each probability's
// mass under its top bits (for positive floats the bit pattern orders like
// the value: its exponent and six bits of mantissa, everything below 2^-64
// in one bucket), a walk down the buckets finds the one where the mass
// crosses the goal, and a selection among that bucket's values alone finds
// the cut: two passes with predictable branches instead of a selection over
// the whole vocabulary, whose comparisons of random probabilities the CPU
// could not predict. The masses above the cut and the ties it needs come
// from that bucket's values, so the draw is the only other pass.
func (s *Sampler) nucleus(probs []float32, topP float64) (cut float32, ties int, mass float64) {
	if s.buckets == nil {
		s.buckets = new([bucketCount]float64)
	}
	masses := s.buckets
	clear(masses[:])
	for _, v := range probs {
		masses[bucketOf(v)] += float64(v)
	}
	var total float64
	for _, m := range masses {
		total += m
	}
	if !(total > 0) || math.IsInf(total, 0) {
		return 0, 0, total
	}
	want := topP * total
	above, crossing := 0.0, 0
	for k := len(masses) - 1; k >= 0; k-- {
		if above+masses[k] >= want {
			crossing = k
			break
		}
		above += masses[k]
	}
	// The crossing bucket's values, without a branch per token (whether a
	// random probability falls in one bucket is a coin the CPU cannot
	// predict): every value is written, and the count moves only for those
	// whose bits lie in the bucket's range.
	lo, hi := bucketBounds(crossing)
	if cap(s.vals) < len(probs) {
		s.vals = make([]float32, len(probs))
	}
	buf := s.vals[:len(probs)]
	loBits, width := math.Float32bits(lo), math.Float32bits(hi)-math.Float32bits(lo)
	n := 0
	for _, v := range probs {
		buf[n] = v
		if math.Float32bits(v)-loBits < width {
			n++
		}
	}
	in := buf[:n]
	if len(in) == 0 {
		// Rounding: the buckets held less than want. Everything positive
		// is the nucleus: its smallest value is the cut, with all its ties.
		cut = math.MaxFloat32
		for _, v := range probs {
			if v > 0 {
				cut = min(cut, v)
			}
		}
		for _, v := range probs {
			if v > 0 {
				mass += float64(v)
			}
			if v == cut {
				ties++
			}
		}
		return cut, ties, mass
	}
	cut = selectFrom(in, above, want)
	// The values above the cut are the buckets above plus those of the
	// crossing bucket above it; then ties at the cut until the mass
	// reaches want (at least one: the cut is a value the prefix needs).
	mass = above
	avail := 0
	for _, v := range in {
		switch {
		case v > cut:
			mass += float64(v)
		case v == cut:
			avail++
		}
	}
	for ties < avail {
		mass += float64(cut)
		ties++
		if mass >= want {
			break
		}
	}
	return cut, ties, mass
}

// bucketBounds is the range [lo, hi) of the positive probabilities that
// bucketOf files under k.
func bucketBounds(k int) (lo, hi float32) {
	if k == 0 {
		return math.SmallestNonzeroFloat32, math.Float32frombits(bucketLow << (23 - 6))
	}
	lo = math.Float32frombits(uint32(bucketLow+k-1) << (23 - 6))
	if k == bucketCount-1 {
		return lo, float32(math.Inf(1))
	}
	return lo, math.Float32frombits(uint32(bucketLow+k) << (23 - 6))
}

// bucketCount is nucleus's number of buckets: 65 exponents (2^-64 … 2^0)
// of 64 mantissa steps each, and one for everything smaller.
const bucketCount = 65*64 + 1

// bucketLow is the top bits (exponent and six mantissa bits) of 2^-64, the
// start of bucket 1.
const bucketLow = (127 - 64) << 6

// bucketOf is the bucket of probability v ∈ [0, 1].
func bucketOf(v float32) int {
	b := math.Float32bits(v) >> (23 - 6) // exponent and six mantissa bits
	if b < bucketLow {
		return 0
	}
	return min(int(b-bucketLow)+1, bucketCount-1)
}

// selectFrom is nucleus's cut among vals, the values of one bucket,
// when the values above the bucket hold above: a weighted quickselect that
// reorders vals.
func selectFrom(vals []float32, above, want float64) float32 {
	for len(vals) > 1 {
		pivot := median3(vals[0], vals[len(vals)/2], vals[len(vals)-1])
		// Three-way partition: greater | equal | less.
		gt, lt := 0, len(vals)
		var mGreater, mEqual float64
		for i := 0; i < lt; {
			switch v := vals[i]; {
			case v > pivot:
				vals[gt], vals[i] = vals[i], vals[gt]
				mGreater += float64(v)
				gt++
				i++
			case v < pivot:
				lt--
				vals[lt], vals[i] = vals[i], vals[lt]
			default:
				mEqual += float64(v)
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

func median3(a, b, c float32) float32 {
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
