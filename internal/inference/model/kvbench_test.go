package model

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"partnerapi/internal/inference/gguf"
)

// BenchmarkKVSideBySide measures steady-state batched decode of the 15M and
// 135M shapes over the two KV cache types in one process, alternating a
// step of each per iteration, so that both meet the same load on a shared
// machine (wall times of separate runs moved by ±40 % there). Every
// sequence is prefilled to 256 positions and decodes to 384 before it is
// truncated back to 256, as `bench engine` (256-token prompts, 128
// generated) does; ten sequences are one 10-row step. It reports each
// type's tokens per second and the q8 ÷ f16 ratio of the medians of the
// per-step times.
func BenchmarkKVSideBySide(b *testing.B) {
	shapes := []struct {
		name string
		cfg  synthConfig
	}{
		{"15m", synthConfig{arch: "llama", embd: 288, layers: 6, heads: 6, kvHeads: 6, ff: 768, vocab: 32000, ctx: 512, rot: 48}},
		{"135m", synthConfig{arch: "llama", embd: 576, layers: 30, heads: 9, kvHeads: 3, ff: 1536, vocab: 49152, ctx: 512, rot: 64}},
	}
	for _, sh := range shapes {
		for _, typ := range []gguf.GGMLType{gguf.Q8_0, gguf.Q4_0} {
			cfg := sh.cfg
			cfg.weightType = typ
			m := openSynthetic(b, cfg, 11)
			for _, n := range []int{1, 10} {
				b.Run(fmt.Sprintf("%s/%v/seqs=%d", sh.name, typ, n), func(b *testing.B) {
					kinds := []KVType{KVF16, KVQ8}
					batches := []*Batch{m.NewBatch(), m.NewBatch()}
					seqs := make([][]*Sequence, 2)
					toks := make([][]int, 2)
					prompt := make([]int, 256)
					for i := range prompt {
						prompt[i] = 3 + i
					}
					for k, kt := range kinds {
						for i := range n {
							s := m.newSequence(0, kt)
							if _, err := s.Forward(prompt); err != nil {
								b.Fatal(err)
							}
							seqs[k] = append(seqs[k], s)
							toks[k] = append(toks[k], 1+i)
						}
					}
					times := [2][]time.Duration{}
					for b.Loop() {
						for k := range kinds {
							if seqs[k][0].Pos() >= 384 {
								for _, s := range seqs[k] {
									s.Truncate(256)
								}
							}
							t0 := time.Now()
							out, err := batches[k].Step(seqs[k], toks[k])
							times[k] = append(times[k], time.Since(t0))
							if err != nil {
								b.Fatal(err)
							}
							for i := range toks[k] {
								toks[k][i] = argmax(out[i])
							}
						}
					}
					med := func(d []time.Duration) float64 {
						d = slices.Clone(d)
						slices.Sort(d)
						return float64(d[len(d)/2])
					}
					f16, q8 := med(times[0]), med(times[1])
					b.ReportMetric(float64(n)*1e9/f16, "f16-tok/s")
					b.ReportMetric(float64(n)*1e9/q8, "q8-tok/s")
					b.ReportMetric(f16/q8, "q8/f16")
				})
			}
		}
	}
}
