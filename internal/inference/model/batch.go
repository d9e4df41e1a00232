package model

import (
	"errors"
	"fmt"
	"math"

	"partnerapi/internal/inference/kernels"
)

// Batch is the scratch space of a decode step that advances many sequences
// by one token each. Its point is that every weight matrix is read once per
// step for all sequences (kernels.MatMul with one row per sequence), which
// is what makes concurrent streams cheaper than serialised ones when decode
// is memory-bound; attention stays per sequence over its own KV cache. A
// Batch is not safe for concurrent use.
type Batch struct {
	m                                       *Model
	x, xb, q, kb, vb, attn, gate, up, normd []float32
	logits                                  []float32
	out                                     [][]float32
	ops                                     []kernels.MatMulOp

	// The attention job of the current step and layer, read by attendFn
	// (bound once in NewBatch, so handing it to the worker pool allocates
	// nothing per layer).
	seqs     []*Sequence
	layer    int
	maxSpan  int
	attendFn func(lo, hi int)
}

// NewBatch returns an empty batch scratch for m; it grows to the largest
// batch stepped.
func (m *Model) NewBatch() *Batch {
	b := &Batch{m: m}
	b.attendFn = b.attendRange
	return b
}

// attendRange computes the attention of work items [lo, hi) of the current
// layer: one item per (sequence, head), each over its own sequence's cache.
func (b *Batch) attendRange(lo, hi int) {
	m := b.m
	hd, Q, KV := m.HeadDim, m.QDim(), m.KVDim()
	group := m.NHead / m.NHeadKV
	scale := float32(1 / math.Sqrt(float64(hd)))
	scores := getScores(b.maxSpan)
	for it := lo; it < hi; it++ {
		t, h := it/m.NHead, it%m.NHead
		s := b.seqs[t]
		attendHead(b.q[t*Q+h*hd:t*Q+(h+1)*hd], b.attn[t*Q+h*hd:t*Q+(h+1)*hd],
			s.k[b.layer], s.v[b.layer], s.pos+1, (h/group)*hd, KV, scale, *scores)
	}
	scoresPool.Put(scores)
}

// Step appends tokens[i] to seqs[i] for every i in one pass over the
// weights and returns each sequence's logits for its next token (the
// sequence's own buffer, as Forward returns it; the outer slice is reused
// by the next Step). The results are
// bit-identical to calling seqs[i].Forward([]int{tokens[i]}) one by one:
// every operation works per row, in the same order. A sequence must appear
// at most once.
func (b *Batch) Step(seqs []*Sequence, tokens []int) ([][]float32, error) {
	m := b.m
	n := len(seqs)
	if n == 0 || n != len(tokens) {
		return nil, errors.New("model: Step needs one token per sequence")
	}
	for i, s := range seqs {
		if s.m != m {
			return nil, errors.New("model: Step mixes sequences of different models")
		}
		if s.pos+1 > s.maxCtx {
			return nil, fmt.Errorf("%w (%d + 1 > %d)", ErrContextFull, s.pos, s.maxCtx)
		}
		if t := tokens[i]; t < 0 || t >= m.NVocab {
			return nil, fmt.Errorf("model: token id %d out of range [0, %d)", t, m.NVocab)
		}
	}
	E, Q, KV, FF := m.NEmbd, m.QDim(), m.KVDim(), m.NFF
	b.x = grow(b.x, n*E)
	b.xb = grow(b.xb, n*max(E, Q))
	b.q = grow(b.q, n*Q)
	b.kb = grow(b.kb, n*KV)
	b.vb = grow(b.vb, n*KV)
	b.attn = grow(b.attn, n*Q)
	b.gate = grow(b.gate, n*FF)
	b.up = grow(b.up, n*FF)
	b.normd = grow(b.normd, n*E)
	x, xb := b.x, b.xb[:n*E]

	for t, tok := range tokens {
		kernels.DequantizeRow(x[t*E:(t+1)*E], m.TokenEmbd.Type, m.TokenEmbd.Row(tok))
	}
	for _, s := range seqs {
		s.prepareRope(1)
	}
	hd := m.HeadDim
	b.seqs = seqs
	b.maxSpan = 0
	for _, s := range seqs {
		b.maxSpan = max(b.maxSpan, s.pos+1)
	}
	for l := range m.Layers {
		ly := &m.Layers[l]
		rmsNormRows(xb, x, ly.AttnNorm, m.NormEps, E)
		b.ops = append(b.ops[:0], kernels.MatMulOp{Dst: b.q[:n*Q], W: ly.Wq},
			kernels.MatMulOp{Dst: b.kb[:n*KV], W: ly.Wk}, kernels.MatMulOp{Dst: b.vb[:n*KV], W: ly.Wv})
		kernels.MatMulMany(b.ops, xb, n)
		if ly.Bq != nil {
			addBiasRows(b.q, ly.Bq)
			addBiasRows(b.kb, ly.Bk)
			addBiasRows(b.vb, ly.Bv)
		}
		for t, s := range seqs {
			s.rope(b.q[t*Q:(t+1)*Q], 0)
			s.rope(b.kb[t*KV:(t+1)*KV], 0)
			s.k[l] = appendKV(s.k[l], b.kb[t*KV:(t+1)*KV], s.pos*KV, s.maxCtx*KV)
			s.v[l] = appendKV(s.v[l], b.vb[t*KV:(t+1)*KV], s.pos*KV, s.maxCtx*KV)
		}
		items := n * m.NHead
		b.layer = l
		kernels.ParallelFor(items, attentionWork(items, b.maxSpan, hd), b.attendFn)
		xo := b.xb[:n*E]
		kernels.MatMul(xo, ly.Wo, b.attn, n)
		addRows(x, xo)

		rmsNormRows(xb, x, ly.FFNNorm, m.NormEps, E)
		b.ops = append(b.ops[:0], kernels.MatMulOp{Dst: b.gate[:n*FF], W: ly.Wgate}, kernels.MatMulOp{Dst: b.up[:n*FF], W: ly.Wup})
		kernels.MatMulMany(b.ops, xb, n)
		kernels.SiLUMul(b.gate[:n*FF], b.up[:n*FF])
		kernels.MatMul(xo, ly.Wdown, b.gate[:n*FF], n)
		addRows(x, xo)
	}
	rmsNormRows(b.normd, x, m.OutputNorm, m.NormEps, E)
	b.logits = grow(b.logits, n*m.NVocab)
	kernels.MatMul(b.logits, m.Output, b.normd, n)
	b.seqs = nil // do not keep the sequences alive between steps
	b.out = b.out[:0]
	out := b.out
	for t, s := range seqs {
		s.pos++
		copy(s.logits, b.logits[t*m.NVocab:(t+1)*m.NVocab])
		out = append(out, s.logits)
	}
	b.out = out
	return out, nil
}

// KVBytes is the memory held by the sequence's KV cache (its capacity, not
// just the used part).
func (s *Sequence) KVBytes() int64 {
	var n int64
	for l := range s.k {
		n += int64(cap(s.k[l])+cap(s.v[l])) * 4
	}
	return n
}

// Release drops the KV cache so that its memory can be reclaimed at once,
// even while something still refers to the Sequence; the sequence is empty
// afterwards and grows a new cache if used again.
func (s *Sequence) Release() {
	for l := range s.k {
		s.k[l], s.v[l] = nil, nil
	}
	s.pos = 0
}

// ClonePrefix returns an independent copy of the first n tokens of the
// sequence (all of them when n ≥ Pos): a prompt prefix cached for one request
// is shared with the next this way.
func (s *Sequence) ClonePrefix(n int) *Sequence {
	n = min(max(n, 0), s.pos)
	c := s.m.NewSequence(s.maxCtx)
	c.pos = n
	kv := n * s.m.KVDim()
	for l := range s.k {
		c.k[l] = appendKV(nil, s.k[l][:kv], 0, s.maxCtx*s.m.KVDim())
		c.v[l] = appendKV(nil, s.v[l][:kv], 0, s.maxCtx*s.m.KVDim())
	}
	return c
}
