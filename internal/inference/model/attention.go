package model

import (
	"math"
	"sort"
	"sync/atomic"

	"partnerapi/internal/inference/kernels"
)

// Attention of a step is cut into work items for the worker pool: one per
// (row, KV group, part of the group's query heads, chunk of the row's cached
// positions). A lone decoding sequence has only NHeadKV groups (three for
// SmolLM2-135M), too few items for two cores, so its attention ran on the
// calling goroutine while the other core spun. In models with so few KV
// groups, rows whose span (positions attended to) exceeds attnChunkLen are
// therefore split over positions, as flash-decoding does: each chunk
// computes its heads' softmax and weighted sum over its own positions along
// with the log of its softmax denominator, and whoever finishes a group's
// last chunk merges the chunks' results, weighting each by its share of the
// total denominator.
//
// The number of chunks and their bounds depend only on the row's span and
// the model, never on the rest of the batch, and the merge adds the chunks in a fixed order,
// so a token's result stays the same whichever batch it is stepped in. Rows
// of one chunk take the single-pass path (attendGroup) unchanged.

// attnChunkLen is the most positions a chunk covers; a row's span is cut
// into ceil(span / attnChunkLen) chunks of (nearly) equal size. It is a
// variable so that tests can exercise the merge with short sequences.
//
// Each chunk costs its own query rounding, a copy of its scores and a
// share of the merge, and a lone sequence's idle core prefetches the next
// product's weights, so an uneven split of its three groups costs less
// than it seems. BenchmarkAttnChunkSideBySide (Zen 5, 2026-12-03, steps
// of each setting alternating in one process, Q8_0, two runs) measured 256
// against 512 at 1.00–1.07× the step time in every case (ten 135M streams
// at 256–384 positions 1.07×, one 1.02–1.05×; ten at 1 024–1 152
// 1.04–1.05×; one 135M stream at 4 096 1.03–1.07×; 0.5B 1.00–1.03×). No
// chunking was as fast as 512 at 256–384 positions and faster for ten
// streams at 1 024 (0.94×), but a lone 135M stream took 1.04–1.05× as
// long at 1 024 and 1.13–1.21× at 4 096; 1 024 measured 0.97–1.02× of
// 512, and would leave a lone stream's spans of 513–1 024 unsplit.
var attnChunkLen = 512

// attnChunkKVHeads: only models with fewer KV heads than this chunk their
// rows. With as many KV groups as minAttentionItems a lone sequence already
// gives every core work, and chunking would only add its merge (some 10 %
// of a chunked row's attention) to batched steps; the choice depends on the
// model alone, so it keeps steps batch-invariant. A variable for the tests.
var attnChunkKVHeads = minAttentionItems

// attnChunks is a step's plan of chunked attention.
type attnChunks struct {
	nChunks   []int          // per row: chunks of its span
	itemStart []int          // per row and one past: first work item
	partStart []int          // per row: first chunk slot in partial and lse
	partial   []float32      // per chunk slot: Q values (each head's weighted sum)
	lse       []float64      // per chunk slot: NHead log-sum-exps
	pending   []atomic.Int32 // per (row, group, head part): chunks not yet done
}

// chunksFor is how many chunks a row attending to span positions is cut
// into, for a model of kvHeads KV heads.
func chunksFor(span, kvHeads int) int {
	if kvHeads >= attnChunkKVHeads {
		return 1
	}
	return max(1, (span+attnChunkLen-1)/attnChunkLen)
}

// prepareAttention plans the current layer's attention work items and
// returns their number.
func (b *Batch) prepareAttention() int {
	m := b.m
	a := &b.attn2
	rows := len(b.rowSeq)
	a.nChunks, a.itemStart, a.partStart = a.nChunks[:0], a.itemStart[:0], a.partStart[:0]
	total := 0
	for r := range rows {
		a.nChunks = append(a.nChunks, chunksFor(b.rowPos[r]+1, m.NHeadKV))
		a.partStart = append(a.partStart, total)
		if a.nChunks[r] > 1 {
			total += a.nChunks[r]
		}
	}
	// The head split changes no result (see attendGroup), so it may depend
	// on the batch; it counts a long row's chunks as groups of their own.
	chunkGroups := 0
	for _, n := range a.nChunks {
		chunkGroups += n * m.NHeadKV
	}
	b.groupParts = attentionGroupParts(chunkGroups, m.NHead/m.NHeadKV)
	items := 0
	for r := range rows {
		a.itemStart = append(a.itemStart, items)
		items += m.NHeadKV * b.groupParts * a.nChunks[r]
	}
	a.itemStart = append(a.itemStart, items)
	if total > 0 {
		a.partial = grow(a.partial, total*m.QDim())
		if cap(a.lse) < total*m.NHead {
			a.lse = make([]float64, total*m.NHead)
		}
		a.lse = a.lse[:total*m.NHead]
	}
	if n := rows * m.NHeadKV * b.groupParts; cap(a.pending) < n {
		a.pending = make([]atomic.Int32, n)
	} else {
		a.pending = a.pending[:n]
	}
	for r := range rows {
		for g := range m.NHeadKV * b.groupParts {
			a.pending[r*m.NHeadKV*b.groupParts+g].Store(int32(a.nChunks[r]))
		}
	}
	return items
}

// attendRange computes the attention of work items [lo, hi) of the current
// layer (see prepareAttention), each over its own sequence's cache up to the
// row's position (causal).
func (b *Batch) attendRange(lo, hi int) {
	m := b.m
	a := &b.attn2
	hd, Q := m.HeadDim, m.QDim()
	group, parts := m.NHead/m.NHeadKV, b.groupParts
	scale := float32(1 / math.Sqrt(float64(hd)))
	// Whole rows take group·span scores, chunks twice their length (a
	// copy of the raw scores, see attendChunk), and a chunk is never longer
	// than its row.
	scratch := getAttnScratch(2 * group * b.maxSpan)
	r := sort.Search(len(a.itemStart)-1, func(i int) bool { return a.itemStart[i+1] > lo })
	for it := lo; it < hi; it++ {
		for it >= a.itemStart[r+1] {
			r++
		}
		nc := a.nChunks[r]
		local := it - a.itemStart[r]
		gp, c := local/nc, local%nc
		kv, part := gp/parts, gp%parts
		h0 := kv*group + part*group/parts
		h1 := kv*group + (part+1)*group/parts
		s := b.rowSeq[r]
		span := b.rowPos[r] + 1
		if nc == 1 {
			rows := s.rows(b.layer, kv, 0)
			attendGroup(b.q[r*Q+h0*hd:r*Q+h1*hd], b.attn[r*Q+h0*hd:r*Q+h1*hd], &rows, span, scale, scratch)
			continue
		}
		p0, p1 := c*span/nc, (c+1)*span/nc
		slot := a.partStart[r] + c
		rows := s.rows(b.layer, kv, p0)
		attendChunk(b.q[r*Q+h0*hd:r*Q+h1*hd], a.partial[slot*Q+h0*hd:slot*Q+h1*hd], a.lse[slot*m.NHead+h0:slot*m.NHead+h1],
			&rows, p1-p0, scale, scratch)
		if a.pending[r*m.NHeadKV*parts+gp].Add(-1) == 0 {
			b.mergeChunks(r, h0, h1)
		}
	}
	attnScratchPool.Put(scratch)
}

// mergeChunks combines the chunks of row r's heads [h0, h1) into the row's
// attention output: each chunk's normalised weighted sum counts with its
// softmax denominator relative to the others', exp(lse_c − max lse) / Σ. The
// chunks are added in order, so the result does not depend on which worker
// finished which chunk.
func (b *Batch) mergeChunks(r, h0, h1 int) {
	m := b.m
	a := &b.attn2
	hd, Q, nc, first := m.HeadDim, m.QDim(), a.nChunks[r], a.partStart[r]
	var wbuf [16]float32
	w := wbuf[:0]
	if nc > len(wbuf) {
		w = make([]float32, 0, nc)
	}
	for h := h0; h < h1; h++ {
		mx := math.Inf(-1)
		for c := range nc {
			mx = max(mx, a.lse[(first+c)*m.NHead+h])
		}
		var sum float64
		for c := range nc {
			sum += math.Exp(a.lse[(first+c)*m.NHead+h] - mx)
		}
		w = w[:0]
		for c := range nc {
			w = append(w, float32(math.Exp(a.lse[(first+c)*m.NHead+h]-mx)/sum))
		}
		out := b.attn[r*Q+h*hd : r*Q+(h+1)*hd]
		clear(out)
		for c, wc := range w {
			kernels.AxpyF32(out, wc, a.partial[(first+c)*Q+h*hd:(first+c)*Q+(h+1)*hd])
		}
	}
}

// attentionGroupParts is how many parts each KV group's query heads are
// split into for the worker pool. A whole group per item reads the cache
// once for all its heads; when a step has fewer groups than
// minAttentionItems (a lone decoding sequence with a short span has
// NHeadKV: 3 for SmolLM2-135M, 2 for Qwen2.5-0.5B) the groups are split so
// that both cores get work, but never below minHeadsPerPart heads: the
// vector kernels take three or four heads in one pass for the price of one,
// so a smaller part would only read the cache again (135M's groups of three
// stay whole, 0.5B's groups of seven become 3 + 4).
func attentionGroupParts(groups, groupSize int) int {
	if groups >= minAttentionItems {
		return 1
	}
	return max(1, min(groupSize/minHeadsPerPart, (minAttentionItems+groups-1)/groups))
}

// minHeadsPerPart is the fewest query heads attentionGroupParts leaves in a
// part.
const minHeadsPerPart = 3

// minAttentionItems is the fewest work items a step's attention is cut into
// when its groups allow: the pool runs a job in parallel only with at least
// two items per core.
const minAttentionItems = 4
