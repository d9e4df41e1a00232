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
	k, v   [][]float32 // per layer: pos × KVDim values

	// Scratch, sized for the largest batch seen so far.
	x, xb, q, kb, vb, attn, gate, up []float32
	ropeCos, ropeSin                 []float32
	invFreq                          []float64
	logits                           []float32
	// ops holds the products that share one input (Q/K/V, gate/up), so
	// that building them allocates nothing per layer.
	ops []kernels.MatMulOp

	// The attention job of the current layer, read by attendFn (bound on
	// first use, so handing it to the worker pool allocates nothing).
	attnLayer, attnP0 int
	attendFn          func(lo, hi int)
}

// NewSequence returns an empty sequence holding at most maxCtx tokens
// (capped at the model's trained context length). The KV cache grows on
// demand, so a large maxCtx costs nothing until it is used.
func (m *Model) NewSequence(maxCtx int) *Sequence {
	if maxCtx <= 0 || maxCtx > m.NCtx {
		maxCtx = m.NCtx
	}
	s := &Sequence{m: m, maxCtx: maxCtx, k: make([][]float32, m.NLayer), v: make([][]float32, m.NLayer)}
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
		c.k[l] = append([]float32(nil), s.k[l][:kv]...)
		c.v[l] = append([]float32(nil), s.v[l][:kv]...)
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
	for len(tokens) > 0 {
		n := min(len(tokens), prefillChunk)
		s.forwardBatch(tokens[:n])
		tokens = tokens[n:]
	}
	return s.logits, nil
}

// forwardBatch runs n tokens through every layer at once (one pass over the
// weights for the batch) and leaves the last token's logits in s.logits.
func (s *Sequence) forwardBatch(tokens []int) {
	m := s.m
	n := len(tokens)
	E, Q, KV, FF := m.NEmbd, m.QDim(), m.KVDim(), m.NFF
	s.x = grow(s.x, n*E)
	s.xb = grow(s.xb, n*max(E, Q))
	s.q = grow(s.q, n*Q)
	s.kb = grow(s.kb, n*KV)
	s.vb = grow(s.vb, n*KV)
	s.attn = grow(s.attn, n*Q)
	s.gate = grow(s.gate, n*FF)
	s.up = grow(s.up, n*FF)
	x, xb := s.x, s.xb[:n*E]

	for t, tok := range tokens {
		kernels.DequantizeRow(x[t*E:(t+1)*E], m.TokenEmbd.Type, m.TokenEmbd.Row(tok))
	}
	s.prepareRope(n)
	p0 := s.pos
	for l := range m.Layers {
		ly := &m.Layers[l]
		rmsNormRows(xb, x, ly.AttnNorm, m.NormEps, E)
		s.ops = append(s.ops[:0], kernels.MatMulOp{Dst: s.q[:n*Q], W: ly.Wq},
			kernels.MatMulOp{Dst: s.kb[:n*KV], W: ly.Wk}, kernels.MatMulOp{Dst: s.vb[:n*KV], W: ly.Wv})
		kernels.MatMulMany(s.ops, xb, n)
		if ly.Bq != nil {
			addBiasRows(s.q, ly.Bq)
			addBiasRows(s.kb, ly.Bk)
			addBiasRows(s.vb, ly.Bv)
		}
		for t := 0; t < n; t++ {
			s.rope(s.q[t*Q:(t+1)*Q], t)
			s.rope(s.kb[t*KV:(t+1)*KV], t)
		}
		s.k[l] = appendKV(s.k[l], s.kb[:n*KV], p0*KV, s.maxCtx*KV)
		s.v[l] = appendKV(s.v[l], s.vb[:n*KV], p0*KV, s.maxCtx*KV)
		s.attention(l, n, p0)
		xo := s.xb[:n*E]
		kernels.MatMul(xo, ly.Wo, s.attn, n)
		addRows(x, xo)

		rmsNormRows(xb, x, ly.FFNNorm, m.NormEps, E)
		s.ops = append(s.ops[:0], kernels.MatMulOp{Dst: s.gate[:n*FF], W: ly.Wgate}, kernels.MatMulOp{Dst: s.up[:n*FF], W: ly.Wup})
		kernels.MatMulMany(s.ops, xb, n)
		kernels.SiLUMul(s.gate[:n*FF], s.up[:n*FF])
		kernels.MatMul(xo, ly.Wdown, s.gate[:n*FF], n)
		addRows(x, xo)
	}
	s.pos += n
	last := xb[:E]
	rmsNormRows(last, x[(n-1)*E:n*E], m.OutputNorm, m.NormEps, E)
	kernels.MatVec(s.logits, m.Output, last)
}

// appendKV stores rows at value offset off of a cache, growing the cache
// geometrically (never beyond limit values) so that short sequences in a
// long context do not pay for the whole window up front.
func appendKV(cache, rows []float32, off, limit int) []float32 {
	need := off + len(rows)
	if cap(cache) < need {
		c := make([]float32, need, min(max(need, 2*cap(cache), 1024), max(limit, need)))
		copy(c, cache[:off])
		cache = c
	}
	cache = cache[:need]
	copy(cache[off:], rows)
	return cache
}

func grow(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}
