package model

import (
	"errors"
	"fmt"

	"partnerapi/internal/inference/kernels"
)

// Batch is the scratch space of a forward step over many sequences at
// once, each appending one token (decode) or a chunk of tokens (prefill).
// Its point is that every weight matrix is read once per step for all rows
// of all sequences (kernels.MatMul with one row per token), which is what
// makes concurrent streams cheaper than serialised ones when decode is
// memory-bound, and what lets a joining prompt's prefill ride along with
// the decode steps of running streams; attention stays per sequence over
// its own KV cache. Sequence.Forward runs through a Batch of its own, so a
// row computes the same whichever way it is stepped. A Batch is not safe
// for concurrent use.
type Batch struct {
	m                                       *Model
	x, xb, q, kb, vb, attn, gate, up, normd []float32
	logits                                  []float32
	out                                     [][]float32
	// keyTmp is each row's scratch for rounding its keys to int8
	// (storeRange): rows are stored in parallel, so each has its own.
	keyTmp []int8
	// everyRow makes a step of one sequence compute the logits after
	// every row of its chunk, not only the last (ForwardEach).
	everyRow bool
	ops      []kernels.MatMulOp
	one      [][]int // Step's one-token chunks

	// The rows of the current step: the sequence of each row, its position
	// and its index within the sequence's chunk (its RoPE row), and where
	// each sequence's rows start. attendFn (bound once in NewBatch, so
	// handing it to the worker pool allocates nothing) reads them.
	seqs       []*Sequence
	rowSeq     []*Sequence
	rowPos     []int
	rowChunk   []int
	seqStart   []int
	layer      int
	maxSpan    int
	groupParts int // see attentionGroupParts
	attendFn   func(lo, hi int)
	attn2      attnChunks // position chunks of long rows (attention.go)

	// The operands of addNormRows, read by normFn (bound once in NewBatch
	// like attendFn).
	normDst, normX, normAdd, normWeight []float32
	normFn                              func(lo, hi int)
	siluFn                              func(lo, hi int) // siluMulRange, bound once
	storeFn                             func(lo, hi int) // storeRange, bound once

	// Per layer, the weights of its products for kernels.Prefetch: each
	// product names the next one's before it starts, so that idle cores
	// read them ahead (made once in NewBatch).
	hints      []layerHints
	outputHint *kernels.PrefetchHint
}

type layerHints struct{ qkv, o, gateUp, down *kernels.PrefetchHint }

// chainHints makes each layer's hints continue with the product after: a
// core idle for longer than its share of the next product takes goes on
// with its share of the one after that. That is the case while a lone
// sequence of up to 256 positions attends on the calling goroutine (one
// work item per KV group, too few for two cores): SmolLM2-135M decoding
// between 64 and 192 positions ran 1.01–1.07× as fast with the chain,
// between 256 and 384 0.98–1.03× (BenchmarkPrefetchChainSideBySide135M).
func chainHints(hs []layerHints, output *kernels.PrefetchHint) []layerHints {
	out := make([]layerHints, len(hs))
	for l, h := range hs {
		after := output
		if l+1 < len(hs) {
			after = hs[l+1].qkv
		}
		out[l] = layerHints{qkv: h.qkv.Then(h.o), o: h.o.Then(h.gateUp), gateUp: h.gateUp.Then(h.down), down: h.down.Then(after)}
	}
	return out
}

// NewBatch returns an empty batch scratch for m; it grows to the largest
// step taken.
func (m *Model) NewBatch() *Batch {
	b := &Batch{m: m}
	b.attendFn = b.attendRange
	b.normFn = b.addNormRange
	b.siluFn = b.siluMulRange
	b.storeFn = b.storeRange
	for l := range m.Layers {
		ly := &m.Layers[l]
		b.hints = append(b.hints, layerHints{
			qkv:    kernels.NewPrefetchHint(ly.Wq, ly.Wk, ly.Wv),
			o:      kernels.NewPrefetchHint(ly.Wo),
			gateUp: kernels.NewPrefetchHint(ly.Wgate, ly.Wup),
			down:   kernels.NewPrefetchHint(ly.Wdown),
		})
	}
	b.outputHint = kernels.NewPrefetchHint(m.Output)
	b.hints = chainHints(b.hints, b.outputHint)
	return b
}

// Step appends tokens[i] to seqs[i] for every i in one pass over the
// weights and returns each sequence's logits for its next token: a lone
// sequence's own buffer, as Forward returns it, or with several sequences
// views of the batch's buffer; either is valid until the batch's next step,
// which also reuses the outer slice. The results are bit-identical to calling
// seqs[i].Forward([]int{tokens[i]}) one by one: every operation works per
// row, in the same order. A sequence must appear at most once.
func (b *Batch) Step(seqs []*Sequence, tokens []int) ([][]float32, error) {
	if len(seqs) != len(tokens) {
		return nil, errors.New("model: Step needs one token per sequence")
	}
	b.one = b.one[:0]
	for i := range tokens {
		b.one = append(b.one, tokens[i:i+1])
	}
	out, err := b.StepChunks(seqs, b.one)
	clear(b.one) // do not keep the caller's token slice alive
	return out, err
}

// StepChunks appends chunks[i] (at least one token) to seqs[i] for every i
// in one pass over the weights, and returns each sequence's logits for the
// token after its chunk (as Step does: valid until the next step).
// Decoding sequences pass one token, a prompt being prefilled passes a
// chunk of it. Nothing changes when an error is returned. A sequence must
// appear at most once.
func (b *Batch) StepChunks(seqs []*Sequence, chunks [][]int) ([][]float32, error) {
	m := b.m
	n := len(seqs)
	if n == 0 || n != len(chunks) {
		return nil, errors.New("model: a step needs one chunk of tokens per sequence")
	}
	rows := 0
	for i, s := range seqs {
		if s.m != m {
			return nil, errors.New("model: a step mixes sequences of different models")
		}
		if len(chunks[i]) == 0 {
			return nil, errors.New("model: a step needs at least one token per sequence")
		}
		if s.pos+len(chunks[i]) > s.maxCtx {
			return nil, fmt.Errorf("%w (%d + %d > %d)", ErrContextFull, s.pos, len(chunks[i]), s.maxCtx)
		}
		for _, t := range chunks[i] {
			if t < 0 || t >= m.NVocab {
				return nil, fmt.Errorf("model: token id %d out of range [0, %d)", t, m.NVocab)
			}
		}
		rows += len(chunks[i])
	}
	E, Q, KV, FF := m.NEmbd, m.QDim(), m.KVDim(), m.NFF
	b.x = grow(b.x, rows*E)
	b.xb = grow(b.xb, rows*max(E, Q))
	b.q = grow(b.q, rows*Q)
	b.kb = grow(b.kb, rows*KV)
	b.vb = grow(b.vb, rows*KV)
	b.attn = grow(b.attn, rows*Q)
	b.gate = grow(b.gate, rows*FF)
	b.up = grow(b.up, rows*FF)
	b.normd = grow(b.normd, n*E)
	b.keyTmp = grow(b.keyTmp, rows*m.HeadDim)
	x, xb := b.x, b.xb[:rows*E]

	b.seqs = seqs
	b.rowSeq, b.rowPos, b.rowChunk, b.seqStart = b.rowSeq[:0], b.rowPos[:0], b.rowChunk[:0], b.seqStart[:0]
	b.maxSpan = 0
	for i, s := range seqs {
		s.prepareRope(len(chunks[i]))
		b.seqStart = append(b.seqStart, len(b.rowSeq))
		for j, tok := range chunks[i] {
			r := len(b.rowSeq)
			kernels.DequantizeRow(x[r*E:(r+1)*E], m.TokenEmbd.Type, m.TokenEmbd.Row(tok))
			b.rowSeq, b.rowPos, b.rowChunk = append(b.rowSeq, s), append(b.rowPos, s.pos+j), append(b.rowChunk, j)
		}
		b.maxSpan = max(b.maxSpan, s.pos+len(chunks[i]))
	}
	b.seqStart = append(b.seqStart, rows)
	for i, s := range seqs {
		s.reserveKV(s.pos + len(chunks[i]))
	}
	// The previous layer's output projection, added to x by the next
	// layer's attention norm (nil before the first layer).
	var pending []float32
	for l := range m.Layers {
		ly := &m.Layers[l]
		b.addNormRows(xb, x, pending, ly.AttnNorm, rows)
		b.ops = append(b.ops[:0], kernels.MatMulOp{Dst: b.q[:rows*Q], W: ly.Wq},
			kernels.MatMulOp{Dst: b.kb[:rows*KV], W: ly.Wk}, kernels.MatMulOp{Dst: b.vb[:rows*KV], W: ly.Wv})
		kernels.Prefetch(b.hints[l].o)
		kernels.MatMulMany(b.ops, xb, rows)
		b.layer = l
		kernels.ParallelFor(rows, storeWork(rows, Q+2*KV), b.storeFn)
		kernels.ParallelFor(b.prepareAttention(), attentionWork(rows*m.NHead, b.maxSpan, m.HeadDim), b.attendFn)
		xo := b.xb[:rows*E]
		kernels.Prefetch(b.hints[l].gateUp)
		kernels.MatMul(xo, ly.Wo, b.attn[:rows*Q], rows)
		b.addNormRows(xb, x, xo, ly.FFNNorm, rows)
		b.ops = append(b.ops[:0], kernels.MatMulOp{Dst: b.gate[:rows*FF], W: ly.Wgate}, kernels.MatMulOp{Dst: b.up[:rows*FF], W: ly.Wup})
		kernels.Prefetch(b.hints[l].down)
		kernels.MatMulMany(b.ops, xb, rows)
		kernels.ParallelFor(rows, siluWork(rows, FF), b.siluFn)
		if l+1 < len(m.Layers) {
			kernels.Prefetch(b.hints[l+1].qkv)
		} else {
			kernels.Prefetch(b.outputHint)
		}
		kernels.MatMul(xo, ly.Wdown, b.gate[:rows*FF], rows)
		pending = xo
	}
	if pending != nil {
		addRows(x, pending)
	}
	if b.everyRow && n == 1 {
		return b.everyRowLogits(seqs[0], x, rows, len(chunks[0]))
	}
	// Only each sequence's last row predicts a token.
	for i := range seqs {
		last := b.seqStart[i+1] - 1
		rmsNormRows(b.normd[i*E:(i+1)*E], x[last*E:(last+1)*E], m.OutputNorm, m.NormEps, E)
	}
	// A lone sequence's logits go straight to its own buffer, which
	// Forward returns. Several sequences' stay in the batch's, and the
	// step returns views of it: copying them out was a pass over 1.3 MB for
	// ten 15M streams, and stepping ten 15M streams side by side without it
	// ran 1.03–1.06× faster (135M: 1.00×).
	logits := seqs[0].logits
	if n > 1 {
		b.logits = grow(b.logits, n*m.NVocab)
		logits = b.logits
	}
	// The next step starts with the first layer's Q, K and V.
	kernels.Prefetch(b.hints[0].qkv)
	kernels.MatMul(logits, m.Output, b.normd, n)
	out := b.out[:0]
	for i, s := range seqs {
		s.pos += len(chunks[i])
		if n > 1 {
			V := m.NVocab
			out = append(out, b.logits[i*V:(i+1)*V:(i+1)*V])
		} else {
			out = append(out, s.logits)
		}
	}
	b.out = out
	// Do not keep the sequences alive between steps.
	b.seqs = nil
	clear(b.rowSeq)
	return out, nil
}

// addNormRows adds add (when not nil; it may be dst itself) to the rows of x,
// the residual connection, and writes them RMS-normalised and scaled by
// weight to dst, spreading the rows over the worker pool: between the
// products these steps would otherwise run on one core while the other
// workers spin. Every row gets exactly the arithmetic of addRows and
// rmsNormRows, so the results do not depend on the split.
func (b *Batch) addNormRows(dst, x, add, weight []float32, rows int) {
	b.normDst, b.normX, b.normAdd, b.normWeight = dst, x, add, weight
	kernels.ParallelFor(rows, normWork(rows, b.m.NEmbd), b.normFn)
	b.normDst, b.normX, b.normAdd, b.normWeight = nil, nil, nil, nil
}

// addNormRange is addNormRows over rows [lo, hi). A row's sum is read in
// full before its normalised values are written, so dst may be add.
func (b *Batch) addNormRange(lo, hi int) {
	E := b.m.NEmbd
	x := b.normX[lo*E : hi*E]
	if b.normAdd != nil {
		addRows(x, b.normAdd[lo*E:hi*E])
	}
	rmsNormRows(b.normDst[lo*E:hi*E], x, b.normWeight, b.m.NormEps, E)
}

// storeRange adds the current layer's biases to the query, key and value
// rows [lo, hi) of the step, rotates the queries and keys and stores the
// keys and values in their sequences' caches. Ten streams of SmolLM2-135M
// spent ~5 % of a decode step's CPU here, on the calling goroutine while
// the other worker waited. Rows are independent (each writes its own
// position), so the pool may split them anywhere, and each row gets the
// same arithmetic whatever the split.
func (b *Batch) storeRange(lo, hi int) {
	m := b.m
	ly := &m.Layers[b.layer]
	Q, KV := m.QDim(), m.KVDim()
	q, k, v := b.q[lo*Q:hi*Q], b.kb[lo*KV:hi*KV], b.vb[lo*KV:hi*KV]
	if ly.Bq != nil {
		addBiasRows(q, ly.Bq)
		addBiasRows(k, ly.Bk)
		addBiasRows(v, ly.Bv)
	}
	for r := lo; r < hi; r++ {
		s := b.rowSeq[r]
		s.rope(b.q[r*Q:(r+1)*Q], b.rowChunk[r])
		s.rope(b.kb[r*KV:(r+1)*KV], b.rowChunk[r])
		s.storeKV(b.layer, b.kb[r*KV:(r+1)*KV], b.vb[r*KV:(r+1)*KV], b.rowPos[r], b.keyTmp[r*m.HeadDim:(r+1)*m.HeadDim])
	}
}

// siluMulRange applies the gated activation to the feed-forward rows
// [lo, hi) of the current step, a row at a time, so a row's values do not
// depend on how the rows are split over the pool.
func (b *Batch) siluMulRange(lo, hi int) {
	FF := b.m.NFF
	for r := lo; r < hi; r++ {
		kernels.SiLUMul(b.gate[r*FF:(r+1)*FF], b.up[r*FF:(r+1)*FF])
	}
}
