//go:build amd64 && !purego

package model

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"partnerapi/internal/inference/gguf"
	"partnerapi/internal/inference/kernels"
	"partnerapi/internal/testenv"
)

// BenchmarkKVPrefetchL2SideBySide measures batched decode of the 15M and
// 135M shapes over the int8 cache with the blocked score kernels
// prefetching keys and values into the L2 and into the L1 (see
// kernels.SetKVPrefetchL2), in one process, alternating a step of each per
// iteration (which goes first alternating too), so that both meet the same
// load on a shared machine. Sequences are prefilled to 256 positions and
// decode to 384, as `bench engine` does. It reports each setting's tokens
// per second at its median step and process CPU a step (with -cpu 1 only
// the work; with more, the worker pool's spinning too), and the L1 ÷ L2
// ratios of both.
func BenchmarkKVPrefetchL2SideBySide(b *testing.B) {
	defer kernels.SetKVPrefetchL2(kernels.SetKVPrefetchL2(false))
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
			for _, n := range []int{10, 1} {
				b.Run(fmt.Sprintf("%s/%v/seqs=%d", sh.name, typ, n), func(b *testing.B) {
					settings := []bool{true, false}
					batches := []*Batch{m.NewBatch(), m.NewBatch()}
					seqs, toks := make([][]*Sequence, 2), make([][]int, 2)
					prompt := make([]int, 256)
					for i := range prompt {
						prompt[i] = 3 + i
					}
					for k := range settings {
						for i := range n {
							s := m.newSequence(0, KVQ8)
							if _, err := s.Forward(prompt); err != nil {
								b.Fatal(err)
							}
							seqs[k], toks[k] = append(seqs[k], s), append(toks[k], 1+i)
						}
					}
					var times [2][]time.Duration
					var cpu [2]time.Duration
					it := 0
					for b.Loop() {
						it++
						for kk := range settings {
							k := (kk + it) % 2
							kernels.SetKVPrefetchL2(settings[k])
							if seqs[k][0].Pos() >= 384 {
								for _, s := range seqs[k] {
									s.Truncate(256)
								}
							}
							c0, t0 := testenv.ProcessCPU(), time.Now()
							out, err := batches[k].Step(seqs[k], toks[k])
							times[k] = append(times[k], time.Since(t0))
							cpu[k] += testenv.ProcessCPU() - c0
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
					l2, l1 := med(times[0]), med(times[1])
					b.ReportMetric(float64(n)*1e9/l2, "l2-tok/s")
					b.ReportMetric(float64(n)*1e9/l1, "l1-tok/s")
					b.ReportMetric(l1/l2, "wall-l1/l2")
					b.ReportMetric(float64(cpu[0].Microseconds())/float64(b.N), "l2-cpu-µs/op")
					b.ReportMetric(float64(cpu[1].Microseconds())/float64(b.N), "l1-cpu-µs/op")
					if cpu[0] > 0 {
						b.ReportMetric(float64(cpu[1])/float64(cpu[0]), "cpu-l1/l2")
					}
				})
			}
		}
	}
}
