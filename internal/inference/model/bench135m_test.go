package model

import (
	"fmt"
	"testing"
	"time"

	"partnerapi/internal/inference/gguf"
	"partnerapi/internal/inference/kernels"
)

// bench135M loads a random-weight model of the SmolLM2-135M shape
// (576/1536/30 layers/9 heads/3 KV heads/49 152 vocabulary) of type typ.
func bench135M(b *testing.B, typ gguf.GGMLType) *Model {
	b.Helper()
	return benchSynthetic(b, synthConfig{arch: "llama", embd: 576, layers: 30, heads: 9, kvHeads: 3, ff: 1536, vocab: 49152, ctx: 1024, rot: 64, weightType: typ})
}

// bench15M loads a random-weight model of the stories15M shape
// (288/768/6 layers/6 heads/32 000 vocabulary) of type typ, with room for
// the window `partnerapi bench engine` measures.
func bench15M(b *testing.B, typ gguf.GGMLType) *Model {
	b.Helper()
	return benchSynthetic(b, synthConfig{arch: "llama", embd: 288, layers: 6, heads: 6, kvHeads: 6, ff: 768, vocab: 32000, ctx: 1024, rot: 48, weightType: typ})
}

func benchSynthetic(b *testing.B, cfg synthConfig) *Model {
	b.Helper()
	f, err := gguf.Open(writeSynthetic(b, cfg, 7))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	m, err := Load(f)
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// decode135M is a single sequence decoding between start and start+128
// cached positions; start 256 is the window `partnerapi bench engine`
// measures (256 prompt tokens, then 128 generated).
type decode135M struct {
	seq   *Sequence
	tok   int
	start int
}

func newDecode135M(b *testing.B, m *Model) *decode135M { return newDecode135MAt(b, m, 256) }

func newDecode135MAt(b *testing.B, m *Model, start int) *decode135M {
	prompt := make([]int, start)
	for i := range prompt {
		prompt[i] = 3 + i
	}
	d := &decode135M{seq: m.NewSequence(0), tok: 1, start: start}
	if _, err := d.seq.Forward(prompt); err != nil {
		b.Fatal(err)
	}
	return d
}

func (d *decode135M) step(b *testing.B) {
	if d.seq.Pos() >= d.start+128 {
		d.seq.Truncate(d.start)
	}
	logits, err := d.seq.Forward([]int{d.tok})
	if err != nil {
		b.Fatal(err)
	}
	d.tok = argmax(logits)
}

// BenchmarkDecode135M measures single-stream decode of the 135M shape (one
// op = one token), the case of issue 8.
func BenchmarkDecode135M(b *testing.B) {
	for _, typ := range []gguf.GGMLType{gguf.Q8_0, gguf.Q4_0} {
		b.Run(typ.String(), func(b *testing.B) {
			d := newDecode135M(b, bench135M(b, typ))
			for b.Loop() {
				d.step(b)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tok/s")
		})
	}
}

// sideBySide135M times single-stream 135M decode with a setting on and
// off, alternating blocks of tokens within each iteration so both see the
// same machine load (the host is shared), and reports each side's tokens
// per second and the ratio.
func sideBySide135M(b *testing.B, set func(on bool)) { sideBySideAt(b, bench135M, 256, set) }

// sideBySide135MAt is sideBySide135M decoding between start and start+128
// positions.
func sideBySide135MAt(b *testing.B, start int, set func(on bool)) {
	sideBySideAt(b, bench135M, start, set)
}

// sideBySideAt is sideBySide135MAt for the model shape load makes.
func sideBySideAt(b *testing.B, load func(*testing.B, gguf.GGMLType) *Model, start int, set func(on bool)) {
	for _, typ := range []gguf.GGMLType{gguf.Q8_0, gguf.Q4_0} {
		b.Run(typ.String(), func(b *testing.B) {
			defer set(true)
			d := newDecode135MAt(b, load(b, typ), start)
			stepsSideBySide(b, func() { d.step(b) }, 1, 16, set)
		})
	}
}

// BenchmarkPrefetchSideBySide135M compares single-stream 135M decode with
// and without kernels.Prefetch.
func BenchmarkPrefetchSideBySide135M(b *testing.B) {
	sideBySide135M(b, kernels.SetPrefetch)
}

// BenchmarkPrefetchSideBySide15M is BenchmarkPrefetchSideBySide135M for
// the 15M shape, whose Q4_0 weights (8.5 MB) fit in the L3.
func BenchmarkPrefetchSideBySide15M(b *testing.B) {
	sideBySideAt(b, bench15M, 256, kernels.SetPrefetch)
}

// BenchmarkPrefetchChainSideBySide135M compares single-stream 135M decode
// with prefetch hints chained to the product after the next one and
// without, between 64 and 192 positions (attention on one core) and
// between 256 and 384 (attention on both).
func BenchmarkPrefetchChainSideBySide135M(b *testing.B) {
	for _, start := range []int{64, 256} {
		b.Run(fmt.Sprintf("from=%d", start), func(b *testing.B) {
			sideBySide135MAt(b, start, kernels.SetPrefetchChain)
		})
	}
}

// BenchmarkWeightPrefetchL2SideBySide135M compares 135M decode with the
// Q8_0 packed kernels prefetching their weights into the L2 and into the
// L1 (kernels.SetWeightPrefetchL2), for one, four and ten streams and a
// 256-token prefill, in alternating blocks of steps. The Q4_0 rows are a
// control: their kernels do not change. It decides the default per CPU
// (tile_packed_l2_amd64.go); on Zen 4 the prefill measured 0.99–1.01×.
func BenchmarkWeightPrefetchL2SideBySide135M(b *testing.B) {
	defer kernels.SetWeightPrefetchL2(kernels.WeightPrefetch() == "L2")
	for _, typ := range []gguf.GGMLType{gguf.Q8_0, gguf.Q4_0} {
		for _, n := range []int{1, 4, 10} {
			b.Run(fmt.Sprintf("%v/streams=%d", typ, n), func(b *testing.B) {
				m := bench135M(b, typ)
				if n == 1 {
					d := newDecode135M(b, m)
					stepsSideBySide(b, func() { d.step(b) }, 1, 16, kernels.SetWeightPrefetchL2)
					return
				}
				stepsSideBySide(b, batchedDecode135M(b, m, n), n, 4, kernels.SetWeightPrefetchL2)
			})
		}
		b.Run(fmt.Sprintf("%v/prefill=256", typ), func(b *testing.B) {
			stepsSideBySide(b, prefill256(b, bench135M(b, typ)), 256, 1, kernels.SetWeightPrefetchL2)
		})
	}
}

// prefill256 returns a step that prefills one sequence of m with the same
// 256-token prompt from an empty cache.
func prefill256(b *testing.B, m *Model) func() {
	seq := m.NewSequence(0)
	prompt := make([]int, 256)
	for i := range prompt {
		prompt[i] = 3 + i
	}
	return func() {
		seq.Truncate(0)
		if _, err := seq.Forward(prompt); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPrefetchSideBySide135M10 compares a ten-stream 135M decode step
// (ten sequences between 256 and 384 cached positions) with and without
// kernels.Prefetch, alternating steps so both see the same machine load.
func BenchmarkPrefetchSideBySide135M10(b *testing.B) {
	for _, typ := range []gguf.GGMLType{gguf.Q8_0, gguf.Q4_0} {
		b.Run(typ.String(), func(b *testing.B) {
			defer kernels.SetPrefetch(true)
			stepsSideBySide(b, batchedDecode135M(b, bench135M(b, typ), 10), 10, 4, kernels.SetPrefetch)
		})
	}
}

// stepsSideBySide times step (a decode step of streams tokens) with a
// setting on and off, alternating blocks of block steps so both see the
// same machine load, and reports each side's tokens per second and the
// ratio.
func stepsSideBySide(b *testing.B, step func(), streams, block int, set func(on bool)) {
	var on, off time.Duration
	for b.Loop() {
		set(true)
		t0 := time.Now()
		for range block {
			step()
		}
		t1 := time.Now()
		set(false)
		for range block {
			step()
		}
		on, off = on+t1.Sub(t0), off+time.Since(t1)
	}
	b.ReportMetric(float64(streams*block*b.N)/on.Seconds(), "tok/s-new")
	b.ReportMetric(float64(streams*block*b.N)/off.Seconds(), "tok/s-old")
	b.ReportMetric(float64(off)/float64(on), "speedup")
}

// BenchmarkAttnThresholdSideBySide compares single-stream decode with
// attentionWork's divisor at 1 and at 3, between 64 and 192 cached
// positions and between 256 and 384, for both model shapes: the 15M
// shape's six KV heads give both cores attention work at any span, and
// the divisor decides from which span on they get it.
func BenchmarkAttnThresholdSideBySide(b *testing.B) {
	set := func(on bool) {
		attnWorkDivisor = 3
		if on {
			attnWorkDivisor = 1
		}
	}
	for _, shape := range []struct {
		name string
		load func(*testing.B, gguf.GGMLType) *Model
	}{{"15M", bench15M}, {"135M", bench135M}} {
		for _, start := range []int{64, 256} {
			b.Run(fmt.Sprintf("%s/from=%d", shape.name, start), func(b *testing.B) {
				sideBySideAt(b, shape.load, start, set)
			})
		}
	}
}

// batchedDecode135M returns a batched greedy decode step of n sequences of
// m, each between 256 and 384 cached positions (truncated back to 256 when
// they reach 384), as BenchmarkDecode135M's single one.
func batchedDecode135M(b *testing.B, m *Model, n int) func() {
	var seqs []*Sequence
	toks := make([]int, n)
	for i := range n {
		seqs = append(seqs, newDecode135M(b, m).seq)
		toks[i] = 1 + i
	}
	batch := m.NewBatch()
	return func() {
		if seqs[0].Pos() >= 384 {
			for _, s := range seqs {
				s.Truncate(256)
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
}

// BenchmarkKQuantPackedSideBySide compares decode (one stream and ten) and
// a 256-token prefill of a random-weight model whose matrices are all Q4_K
// or all Q6_K (1024/2816/8 layers/16 heads/4 KV heads/32 000 vocabulary:
// dimensions that are multiples of 256, as K-quants need) with the packed
// K-quant kernels and with the block kernels over the GGUF layout,
// alternating in one process (kernels.SetKQuantPacked).
func BenchmarkKQuantPackedSideBySide(b *testing.B) {
	defer kernels.SetKQuantPacked(true)
	for _, typ := range []gguf.GGMLType{gguf.Q4_K, gguf.Q6_K} {
		// Loaded per sub-benchmark: the file is closed when one ends.
		load := func(b *testing.B) *Model {
			return benchSynthetic(b, synthConfig{arch: "llama", embd: 1024, layers: 8, heads: 16, kvHeads: 4, ff: 2816, vocab: 32000, ctx: 1024, rot: 64, weightType: typ})
		}
		b.Run(fmt.Sprintf("%v/streams=1", typ), func(b *testing.B) {
			d := newDecode135M(b, load(b))
			stepsSideBySide(b, func() { d.step(b) }, 1, 8, kernels.SetKQuantPacked)
		})
		b.Run(fmt.Sprintf("%v/streams=10", typ), func(b *testing.B) {
			stepsSideBySide(b, batchedDecode135M(b, load(b), 10), 10, 2, kernels.SetKQuantPacked)
		})
		b.Run(fmt.Sprintf("%v/prefill=256", typ), func(b *testing.B) {
			stepsSideBySide(b, prefill256(b, load(b)), 256, 1, kernels.SetKQuantPacked)
		})
	}
}

// BenchmarkPrepareSplitSideBySide compares a 256-token prefill and a
// ten-stream decode step with the activation passes of large products
// spread over the worker pool and kept on the caller
// (kernels.SetPrepareSplit), alternating in one process, for the 135M shape,
// a four-layer model of Qwen2.5-0.5B's widths (896/4 864) and a Q4_K model
// of BenchmarkKQuantPackedSideBySide's shape.
func BenchmarkPrepareSplitSideBySide(b *testing.B) {
	defer kernels.SetPrepareSplit(true)
	b.Run("Q4_K/prefill=256", func(b *testing.B) {
		m := benchSynthetic(b, synthConfig{arch: "llama", embd: 1024, layers: 8, heads: 16, kvHeads: 4, ff: 2816, vocab: 32000, ctx: 1024, rot: 64, weightType: gguf.Q4_K})
		stepsSideBySide(b, prefill256(b, m), 256, 1, kernels.SetPrepareSplit)
	})
	for _, typ := range []gguf.GGMLType{gguf.Q8_0, gguf.Q4_0} {
		b.Run(fmt.Sprintf("135M/%v/prefill=256", typ), func(b *testing.B) {
			stepsSideBySide(b, prefill256(b, bench135M(b, typ)), 256, 1, kernels.SetPrepareSplit)
		})
		load05 := func(b *testing.B) *Model {
			return benchSynthetic(b, synthConfig{arch: "qwen2", embd: 896, layers: 4, heads: 14, kvHeads: 2, ff: 4864, vocab: 32000, ctx: 1024, rot: 64, bias: true, weightType: typ})
		}
		b.Run(fmt.Sprintf("0.5Bwide/%v/prefill=256", typ), func(b *testing.B) {
			stepsSideBySide(b, prefill256(b, load05(b)), 256, 1, kernels.SetPrepareSplit)
		})
		b.Run(fmt.Sprintf("0.5Bwide/%v/streams=10", typ), func(b *testing.B) {
			stepsSideBySide(b, batchedDecode135M(b, load05(b), 10), 10, 4, kernels.SetPrepareSplit)
		})
	}
}
