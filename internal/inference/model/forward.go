package model

import (
	"errors"
	"fmt"
	"math"

	"partnerapi/internal/inference/kernels"
)

// ErrContextFull is returned when a sequence has no room for more tokens.
var ErrContextFull = errors.New("model: sequence context is full")

// prefillChunk bounds how many prompt tokens go through one batched pass, so
// that the activation scratch stays small for long prompts.
const prefillChunk = 64

// Sequence is one token sequence's state: its KV cache and scratch space. A
// Sequence is not safe for concurrent use; many Sequences may share a Model.
type Sequence struct {
	m      *Model
	maxCtx int
	pos    int
	k, v   [][]uint16 // per layer: pos × KVDim half floats (see appendKV)

	ropeCos, ropeSin []float32 // per chunk row: cos/sin of each rotation angle
	invFreq          []float64
	logits           []float32
	own              *Batch // Forward's scratch, made on first use
	self             [1]*Sequence
	chunk            [1][]int
}

// NewSequence returns an empty sequence holding at most maxCtx tokens
// (capped at the model's trained context length). The KV cache grows on
// demand, so a large maxCtx costs nothing until it is used.
func (m *Model) NewSequence(maxCtx int) *Sequence {
	if maxCtx <= 0 || maxCtx > m.NCtx {
		maxCtx = m.NCtx
	}
	s := &Sequence{m: m, maxCtx: maxCtx, k: make([][]uint16, m.NLayer), v: make([][]uint16, m.NLayer)}
	s.invFreq = make([]float64, m.NRot/2)
	for i := range s.invFreq {
		s.invFreq[i] = math.Pow(m.RopeBase, -2*float64(i)/float64(m.NRot)) * m.RopeFreqSc
		if m.RopeFactors != nil {
			s.invFreq[i] /= float64(m.RopeFactors[i])
		}
	}
	s.logits = make([]float32, m.NVocab)
	return s
}

// Pos is the number of tokens in the sequence.
func (s *Sequence) Pos() int { return s.pos }

// MaxContext is the most tokens the sequence can hold.
func (s *Sequence) MaxContext() int { return s.maxCtx }

// Reset empties the sequence, keeping its allocations.
func (s *Sequence) Reset() { s.pos = 0 }

// Truncate drops tokens after the first n (to reuse a shared prompt prefix).
func (s *Sequence) Truncate(n int) {
	if n < s.pos {
		s.pos = max(n, 0)
	}
}

// Clone returns an independent copy of the sequence, KV cache included: the
// n choices of one request share the prompt this way.
func (s *Sequence) Clone() *Sequence {
	c := s.m.NewSequence(s.maxCtx)
	c.pos = s.pos
	kv := s.pos * s.m.KVDim()
	for l := range s.k {
		c.k[l] = append([]uint16(nil), s.k[l][:kv]...)
		c.v[l] = append([]uint16(nil), s.v[l][:kv]...)
	}
	return c
}

// Forward appends tokens to the sequence and returns the logits that predict
// the token after the last one. The slice is reused by the next call.
func (s *Sequence) Forward(tokens []int) ([]float32, error) {
	if len(tokens) == 0 {
		return nil, errors.New("model: Forward needs at least one token")
	}
	if s.pos+len(tokens) > s.maxCtx {
		return nil, fmt.Errorf("%w (%d + %d > %d)", ErrContextFull, s.pos, len(tokens), s.maxCtx)
	}
	for _, t := range tokens {
		if t < 0 || t >= s.m.NVocab {
			return nil, fmt.Errorf("model: token id %d out of range [0, %d)", t, s.m.NVocab)
		}
	}
	if s.own == nil {
		s.own = s.m.NewBatch()
	}
	s.self[0] = s
	for len(tokens) > 0 {
		n := min(len(tokens), prefillChunk)
		s.chunk[0] = tokens[:n]
		_, err := s.own.StepChunks(s.self[:], s.chunk[:])
		s.chunk[0] = nil
		if err != nil {
			return nil, err
		}
		tokens = tokens[n:]
	}
	return s.logits, nil
}

// appendKV stores rows at value offset off of a cache, growing the cache
// geometrically (never beyond limit values) so that short sequences in a
// long context do not pay for the whole window up front. The cache holds
// IEEE half floats, llama.cpp's default KV type: decode reads the whole
// cache of every sequence for every token, and with ten streams those reads
// match the weight bytes, so halving them matters more than the precision
// (keys and values are rounded once; scores and sums stay float32).
func appendKV(cache []uint16, rows []float32, off, limit int) []uint16 {
	cache = growKV(cache, off, off+len(rows), limit)
	kernels.FloatsToHalves(cache[off:], rows)
	return cache
}

// growKV returns cache resized to need values, keeping the first off.
func growKV(cache []uint16, off, need, limit int) []uint16 {
	if cap(cache) < need {
		c := make([]uint16, need, min(max(need, 2*cap(cache), 1024), max(limit, need)))
		copy(c, cache[:off])
		return c
	}
	return cache[:need]
}

func grow(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}
