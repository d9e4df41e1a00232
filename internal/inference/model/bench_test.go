package model

import (
	"fmt"
	"testing"

	"partnerapi/internal/inference/gguf"
)

// BenchmarkDecode measures single-token decode (one op = one token) and
// BenchmarkPrefill a 64-token batched prompt, on stories260K and on a
// random-weight model with the stories15M shape (288/768/6 layers/32 000
// vocabulary, the ~15M row of inference.md §8).
func BenchmarkDecode(b *testing.B) {
	for _, m := range benchModels(b) {
		b.Run(m.name, func(b *testing.B) {
			// A 256-token window keeps attention cost typical of a short chat.
			seq := m.model.NewSequence(256)
			tok := 1
			for b.Loop() {
				if seq.Pos() == seq.MaxContext() {
					seq.Reset()
				}
				logits, err := seq.Forward([]int{tok})
				if err != nil {
					b.Fatal(err)
				}
				tok = argmax(logits)
			}
		})
	}
}

func BenchmarkPrefill(b *testing.B) {
	prompt := make([]int, 64)
	for i := range prompt {
		prompt[i] = 3 + i
	}
	for _, m := range benchModels(b) {
		b.Run(m.name, func(b *testing.B) {
			seq := m.model.NewSequence(0)
			for b.Loop() {
				seq.Reset()
				if _, err := seq.Forward(prompt); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(prompt))*float64(b.N)/b.Elapsed().Seconds(), "tok/s")
		})
	}
}

type benchModel struct {
	name  string
	model *Model
}

func benchModels(b *testing.B) []benchModel {
	b.Helper()
	out := []benchModel{{"stories260K-F32", openModel(b, "stories260K.gguf")}}
	for _, typ := range []gguf.GGMLType{gguf.Q8_0, gguf.Q4_0} {
		cfg := synthConfig{arch: "llama", embd: 288, layers: 6, heads: 6, kvHeads: 6, ff: 768, vocab: 32000, ctx: 256, rot: 48, weightType: typ}
		f, err := gguf.Open(writeSynthetic(b, cfg, 1))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { f.Close() })
		m, err := Load(f)
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, benchModel{"15M-shape-" + typ.String(), m})
	}
	return out
}

// BenchmarkDecodeBatch measures one batched decode step of 1 and of 10
// sequences (one op = one step; tok/s counts every sequence's token): how
// much reading the weights once per step saves over stepping alone.
func BenchmarkDecodeBatch(b *testing.B) {
	for _, m := range benchModels(b) {
		for _, n := range []int{1, 10} {
			b.Run(fmt.Sprintf("%s/seqs=%d", m.name, n), func(b *testing.B) {
				batch := m.model.NewBatch()
				seqs := make([]*Sequence, n)
				toks := make([]int, n)
				for i := range seqs {
					seqs[i] = m.model.NewSequence(256)
					toks[i] = 1 + i
				}
				for b.Loop() {
					if seqs[0].Pos() == seqs[0].MaxContext() {
						for _, s := range seqs {
							s.Reset()
						}
					}
					out, err := batch.Step(seqs, toks)
					if err != nil {
						b.Fatal(err)
					}
					for i := range toks {
						toks[i] = argmax(out[i])
					}
				}
				b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "tok/s")
			})
		}
	}
}
