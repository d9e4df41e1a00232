package model

import (
	"fmt"
	"runtime"
	"testing"

	"partnerapi/internal/inference/gguf"
	"partnerapi/internal/inference/kernels"
)

// TestDecodeStepAllocatesNothing steps batches of decoding sequences and
// counts heap allocations: a steady-state step (no KV cache growth, buffers
// sized by an earlier step) must make none. Each parallel region used to
// allocate its job and every product its closures, some 130 objects a
// ten-stream step, and the garbage brought collections whose mark phase
// must stop goroutines that spend most of their time in assembly. Forty
// streams take the activation passes that are split over the worker pool.
func TestDecodeStepAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items, so every step allocates")
	}
	for _, typ := range []gguf.GGMLType{gguf.Q8_0, gguf.Q4_0, gguf.Q4_K} {
		cfg := synthConfig{arch: "llama", embd: 256, layers: 2, heads: 4, kvHeads: 2, ff: 512, vocab: 300, ctx: 128, rot: 64, weightType: typ}
		f, err := gguf.Open(writeSynthetic(t, cfg, 5))
		if err != nil {
			t.Fatal(err)
		}
		m, err := Load(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, streams := range []int{1, 10, 40} {
			t.Run(fmt.Sprintf("%v/%d streams", typ, streams), func(t *testing.T) {
				seqs := make([]*Sequence, streams)
				toks := make([]int, streams)
				for i := range seqs {
					// 33 positions: the cache is sized for 48, room for
					// the warm-up step and the counted ones.
					seqs[i] = m.NewSequence(0)
					prompt := make([]int, 33)
					for j := range prompt {
						prompt[j] = (i*7 + j*3) % cfg.vocab
					}
					if _, err := seqs[i].Forward(prompt); err != nil {
						t.Fatal(err)
					}
				}
				batch := m.NewBatch()
				// Two collections before each counted step would empty
				// a sync.Pool: the kernels keep their scratch in free
				// lists of their own (kernels.FreeList), so a step
				// allocates nothing after collections too (with
				// sync.Pools a cycle begun by this test's own set-up
				// failed CI once).
				allocs := testing.AllocsPerRun(10, func() {
					runtime.GC()
					runtime.GC()
					if _, err := batch.Step(seqs, toks); err != nil {
						t.Fatal(err)
					}
				})
				if allocs != 0 {
					t.Errorf("a decode step of %d streams made %.1f heap allocations, want 0 (kernels %s)", streams, allocs, kernels.ISA())
				}
			})
		}
		f.Close()
	}
}
