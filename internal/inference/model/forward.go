package model

import (
	"errors"
	"fmt"
	"math"
	"runtime"
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
	// The KV cache (kvcache.go): per layer, its half-float rows, or with
	// kvType KVQ8 its int8 rows and their scales, views of slab (nil
	// before the first token and after Release).
	kvCarving
	slab        *kvSlab
	slabCleanup runtime.Cleanup // returns slab to the pool if s is dropped unreleased
	kvCap       int             // positions each layer's cache has room for
	kvType      KVType          // the cache's element type, fixed at creation

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
// Its KV cache has the model's KVCache type (KVDefault: DefaultKVType()).
func (m *Model) NewSequence(maxCtx int) *Sequence { return m.newSequence(maxCtx, m.KVCache) }

func (m *Model) newSequence(maxCtx int, kvType KVType) *Sequence {
	if maxCtx <= 0 || maxCtx > m.NCtx {
		maxCtx = m.NCtx
	}
	if kvType == KVDefault {
		kvType = DefaultKVType()
	}
	s := &Sequence{m: m, maxCtx: maxCtx, kvType: kvType}
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

// Forward appends tokens to the sequence and returns the logits that predict
// the token after the last one. The slice is reused by the next call.
func (s *Sequence) Forward(tokens []int) ([]float32, error) {
	if err := s.forwardChunks(tokens, false, nil); err != nil {
		return nil, err
	}
	return s.logits, nil
}

// forwardChunks checks tokens whole (nothing changes on an error), then runs
// them through the sequence in prefill chunks; with everyRow each chunk's
// step keeps every row's logits and hands them to each with the index of
// the chunk's first token.
func (s *Sequence) forwardChunks(tokens []int, everyRow bool, each func(first int, rows [][]float32)) error {
	if len(tokens) == 0 {
		return errors.New("model: Forward needs at least one token")
	}
	if s.pos+len(tokens) > s.maxCtx {
		return fmt.Errorf("%w (%d + %d > %d)", ErrContextFull, s.pos, len(tokens), s.maxCtx)
	}
	for _, t := range tokens {
		if t < 0 || t >= s.m.NVocab {
			return fmt.Errorf("model: token id %d out of range [0, %d)", t, s.m.NVocab)
		}
	}
	if s.own == nil {
		s.own = s.m.NewBatch()
	}
	s.own.everyRow = everyRow
	defer func() { s.own.everyRow = false }()
	s.self[0] = s
	for done := 0; done < len(tokens); {
		n := min(len(tokens)-done, prefillChunk)
		s.chunk[0] = tokens[done : done+n]
		rows, err := s.own.StepChunks(s.self[:], s.chunk[:])
		s.chunk[0] = nil
		if err != nil {
			return err
		}
		if each != nil {
			each(done, rows)
		}
		done += n
	}
	return nil
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
