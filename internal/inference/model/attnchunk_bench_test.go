package model

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"partnerapi/internal/inference/gguf"
	"partnerapi/internal/inference/kernels"
)

// BenchmarkAttnChunkSideBySide measures decode steps of the two shapes
// whose rows are cut into position chunks (SmolLM2-135M, three KV heads;
// Qwen2.5-0.5B, two) with attnChunkLen at 256, 512 (the setting), 1 024
// and no chunking, in one process: each iteration steps once with each
// setting, the order rotating, so that all meet the same load on a shared
// machine. Sequences decode from start to start+128 cached positions. It
// reports the median step at 512 and each other setting's median ÷ it.
func BenchmarkAttnChunkSideBySide(b *testing.B) {
	shapes := []struct {
		name string
		cfg  synthConfig
	}{
		{"135M", synthConfig{arch: "llama", embd: 576, layers: 30, heads: 9, kvHeads: 3, ff: 1536, vocab: 49152, ctx: 8192, rot: 64}},
		{"0.5B", synthConfig{arch: "qwen2", embd: 896, layers: 24, heads: 14, kvHeads: 2, ff: 4864, vocab: 151936, ctx: 8192, rot: 64, bias: true}},
	}
	lens := []int{512, 256, 1024, 1 << 30}
	names := []string{"", "c256÷c512", "c1024÷c512", "whole÷c512"}
	for _, sh := range shapes {
		cfg := sh.cfg
		cfg.weightType = gguf.Q8_0
		m := benchSynthetic(b, cfg)
		for _, start := range []int{256, 1024, 4096} {
			for _, n := range []int{1, 10} {
				if start == 4096 && n == 10 {
					continue
				}
				b.Run(fmt.Sprintf("%s/%v/start=%d/streams=%d", sh.name, cfg.weightType, start, n), func(b *testing.B) {
					step := decodeFrom(b, m, n, start)
					defer func(v int) { attnChunkLen = v }(attnChunkLen)
					w := make([][]time.Duration, len(lens))
					i := 0
					for b.Loop() {
						for k := range lens {
							side := (i + k) % len(lens)
							attnChunkLen = lens[side]
							t0 := time.Now()
							step()
							w[side] = append(w[side], time.Since(t0))
						}
						i++
					}
					med := make([]float64, len(lens))
					for s := range lens {
						slices.Sort(w[s])
						med[s] = float64(w[s][len(w[s])/2].Microseconds())
					}
					b.ReportMetric(med[0], "c512-µs")
					for s := 1; s < len(lens); s++ {
						b.ReportMetric(med[s]/med[0], names[s])
					}
				})
			}
		}
	}
}

// decodeFrom returns a decode step of n sequences between start and
// start+128 cached positions, the next tokens drawn as the engine's
// scheduler draws greedy ones (see engineDecode).
func decodeFrom(b *testing.B, m *Model, n, start int) func() {
	var seqs []*Sequence
	toks := make([]int, n)
	for i := range n {
		seqs = append(seqs, newDecode135MAt(b, m, start).seq)
		toks[i] = 1 + i
	}
	batch := m.NewBatch()
	var out [][]float32
	draw := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			toks[i] = kernels.ArgmaxF32(out[i])
		}
	}
	return func() {
		if seqs[0].Pos() >= start+128 {
			for _, s := range seqs {
				s.Truncate(start)
			}
		}
		var err error
		if out, err = batch.Step(seqs, toks); err != nil {
			b.Fatal(err)
		}
		kernels.ParallelFor(n, n*m.NVocab*8, draw)
		out = nil
	}
}
