package model

import (
	"context"
	"errors"
	"fmt"
	"math"

	"partnerapi/internal/inference/gguf"
)

// Pooling is how Embed turns the hidden states of a text's tokens into one
// vector. The values follow llama.cpp's enum llama_pooling_type, which is
// what GGUF files store under {arch}.pooling_type.
type Pooling int

const (
	// PoolingMean averages every token's hidden state. It is also what a
	// file without a pooling type (or with "none") gets, as llama.cpp's
	// --embedding pools such models by default.
	PoolingMean Pooling = 1
	// PoolingCLS takes the first token's hidden state (BERT-style).
	PoolingCLS Pooling = 2
	// PoolingLast takes the last token's hidden state (decoder embedders
	// such as Qwen3-Embedding).
	PoolingLast Pooling = 3
)

// llama.cpp's values that Embed does not pool: "none" is treated as mean,
// "rank" (a reranker's score head) is refused.
const (
	poolingNone = 0
	poolingRank = 4
)

func (p Pooling) String() string {
	switch p {
	case PoolingMean:
		return "mean"
	case PoolingCLS:
		return "cls"
	case PoolingLast:
		return "last"
	}
	return fmt.Sprintf("pooling(%d)", int(p))
}

// PoolingOf reads {arch}.pooling_type from f: mean when absent or "none",
// an error for a type Embed cannot produce (a reranker's "rank").
func PoolingOf(f *gguf.File) (Pooling, error) {
	arch, _ := f.String("general.architecture")
	key := arch + ".pooling_type"
	raw, present := f.Get(key)
	if !present {
		return PoolingMean, nil
	}
	v, ok := raw.AsUint()
	if !ok {
		// llama.cpp writes -1 for "unspecified"; anything else is not a
		// pooling type at all.
		if i, isInt := raw.AsInt(); isInt && i < 0 {
			return PoolingMean, nil
		}
		return 0, fmt.Errorf("model: %s is not an integer", key)
	}
	switch v {
	case poolingNone, uint64(PoolingMean):
		return PoolingMean, nil
	case uint64(PoolingCLS):
		return PoolingCLS, nil
	case uint64(PoolingLast):
		return PoolingLast, nil
	case poolingRank:
		return 0, fmt.Errorf("model: %s is rank (a reranker), which has no embedding vector", key)
	}
	return 0, fmt.Errorf("model: unknown %s %d", key, v)
}

// Embed runs tokens through the model in a sequence of its own and returns
// the pooled final hidden state (after output_norm, before the output
// projection), L2-normalised. Long inputs go through the batched forward
// prefillChunk tokens at a time, checking ctx between chunks; more tokens
// than the trained context fail with ErrContextFull. Embed is safe to call
// concurrently with anything else using m: the weights are read-only and
// the sequence and its scratch belong to the call.
func (m *Model) Embed(ctx context.Context, tokens []int, pool Pooling) ([]float32, error) {
	if len(tokens) == 0 {
		return nil, errors.New("model: Embed needs at least one token")
	}
	if pool != PoolingMean && pool != PoolingCLS && pool != PoolingLast {
		return nil, fmt.Errorf("model: Embed cannot pool with %v", pool)
	}
	if len(tokens) > m.NCtx {
		return nil, fmt.Errorf("%w (%d > %d)", ErrContextFull, len(tokens), m.NCtx)
	}
	E := m.NEmbd
	seq := m.NewSequence(len(tokens))
	defer seq.Release()
	b := m.NewBatch()
	seqs := []*Sequence{seq}
	chunk := make([][]int, 1)
	sum := make([]float64, E)
	normed := make([]float32, prefillChunk*E)
	for done := 0; done < len(tokens); {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n := min(len(tokens)-done, prefillChunk)
		chunk[0] = tokens[done : done+n]
		if _, err := b.StepChunks(seqs, chunk); err != nil {
			return nil, err
		}
		// After a step, b.x holds every row's final residual stream; the
		// step itself only normalises each sequence's last row (for the
		// logits), so the other rows are normalised here the same way.
		rows := normed[:n*E]
		rmsNormRows(rows, b.x[:n*E], m.OutputNorm, m.NormEps, E)
		switch {
		case pool == PoolingMean:
			for r := range n {
				for i, v := range rows[r*E : (r+1)*E] {
					sum[i] += float64(v)
				}
			}
		case pool == PoolingCLS && done == 0:
			for i, v := range rows[:E] {
				sum[i] = float64(v)
			}
		case pool == PoolingLast && done+n == len(tokens):
			for i, v := range rows[(n-1)*E : n*E] {
				sum[i] = float64(v)
			}
		}
		done += n
	}
	if pool == PoolingMean {
		for i := range sum {
			sum[i] /= float64(len(tokens))
		}
	}
	return normalizeL2(sum), nil
}

// normalizeL2 returns v scaled to unit Euclidean length (a zero vector
// stays zero rather than becoming NaN).
func normalizeL2(v []float64) []float32 {
	var ss float64
	for _, x := range v {
		ss += x * x
	}
	out := make([]float32, len(v))
	if ss == 0 {
		return out
	}
	inv := 1 / math.Sqrt(ss)
	for i, x := range v {
		out[i] = float32(x * inv)
	}
	return out
}
