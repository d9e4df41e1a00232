package model

import "partnerapi/internal/inference/kernels"

// everyRowLogits finishes a step of one sequence whose every row predicts
// a token: all rows are normed and multiplied by the output matrix in one
// product, as a prefill chunk's layers were.
func (b *Batch) everyRowLogits(s *Sequence, x []float32, rows, chunk int) ([][]float32, error) {
	m := b.m
	E, V := m.NEmbd, m.NVocab
	b.normd = grow(b.normd, rows*E)
	for r := range rows {
		rmsNormRows(b.normd[r*E:(r+1)*E], x[r*E:(r+1)*E], m.OutputNorm, m.NormEps, E)
	}
	b.logits = grow(b.logits, rows*V)
	kernels.Prefetch(b.hints[0].qkv)
	kernels.MatMul(b.logits, m.Output, b.normd, rows)
	s.pos += chunk
	out := b.out[:0]
	for r := range rows {
		out = append(out, b.logits[r*V:(r+1)*V:(r+1)*V])
	}
	b.out = out
	b.seqs = nil
	clear(b.rowSeq)
	return out, nil
}

// ForwardEach appends tokens to the sequence like Forward and calls f for
// each token i with the logits that predict the token after it, in chunks
// that run as prefill does (a product over all of a chunk's rows at once),
// so scoring a text costs a prefill, not a decode step per token. The
// logits are valid only during the call of f.
func (s *Sequence) ForwardEach(tokens []int, f func(i int, logits []float32)) error {
	return s.forwardChunks(tokens, true, func(first int, rows [][]float32) {
		for r, logits := range rows {
			f(first+r, logits)
		}
	})
}
