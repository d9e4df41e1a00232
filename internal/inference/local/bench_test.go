package local

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"partnerapi/internal/assistant"
	"partnerapi/internal/inference/gguf"
	"partnerapi/internal/inference/kernels"
)

// writeRandomModel writes a random-weight Q8_0 llama GGUF with the stories15M
// shape (288/768/6 layers/6 heads/6 kv heads/32 000 vocabulary, inference.md
// §8) and an SPM vocabulary (specials, byte tokens, filler pieces) into dir.
// Throughput does not depend on weight values.
func writeRandomModel(tb testing.TB, dir string) {
	tb.Helper()
	const embd, ff, layers, heads, vocab, ctx = 288, 768, 6, 6, 32000, 512
	r := rand.New(rand.NewPCG(1, 2))
	var tensors []gguf.WriteTensor
	add := func(name string, typ gguf.GGMLType, dims []uint64, scale, offset float64) {
		n := 1
		for _, d := range dims {
			n *= int(d)
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = float32((r.Float64()*2-1)*scale + offset)
		}
		enc, err := kernels.Quantize(typ, v)
		if err != nil {
			tb.Fatal(err)
		}
		tensors = append(tensors, gguf.WriteTensor{Name: name, Dims: dims, Type: typ, Data: enc})
	}
	mat := func(name string, in, out int) {
		add(name, gguf.Q8_0, []uint64{uint64(in), uint64(out)}, 1.7/float64(in), 0)
	}
	norm := func(name string) { add(name, gguf.F32, []uint64{embd}, 0.1, 1) }
	mat("token_embd.weight", embd, vocab)
	for l := range layers {
		p := fmt.Sprintf("blk.%d.", l)
		norm(p + "attn_norm.weight")
		mat(p+"attn_q.weight", embd, embd)
		mat(p+"attn_k.weight", embd, embd)
		mat(p+"attn_v.weight", embd, embd)
		mat(p+"attn_output.weight", embd, embd)
		norm(p + "ffn_norm.weight")
		mat(p+"ffn_gate.weight", embd, ff)
		mat(p+"ffn_up.weight", embd, ff)
		mat(p+"ffn_down.weight", ff, embd)
	}
	norm("output_norm.weight")
	mat("output.weight", embd, vocab)

	tokens := make([]string, vocab)
	types := make([]int32, vocab)
	scores := make([]float32, vocab)
	tokens[0], tokens[1], tokens[2] = "<unk>", "<s>", "</s>"
	types[0], types[1], types[2] = 2, 3, 3
	for b := range 256 {
		tokens[3+b], types[3+b] = fmt.Sprintf("<0x%02X>", b), 6
	}
	for i := 259; i < vocab; i++ {
		tokens[i], types[i], scores[i] = fmt.Sprintf("▁w%d", i), 1, -float32(i)
	}
	kvs := []gguf.KV{
		{Key: "general.architecture", Value: gguf.StringValue("llama")},
		{Key: "llama.context_length", Value: gguf.Uint32Value(ctx)},
		{Key: "llama.embedding_length", Value: gguf.Uint32Value(embd)},
		{Key: "llama.block_count", Value: gguf.Uint32Value(layers)},
		{Key: "llama.feed_forward_length", Value: gguf.Uint32Value(ff)},
		{Key: "llama.attention.head_count", Value: gguf.Uint32Value(heads)},
		{Key: "llama.attention.head_count_kv", Value: gguf.Uint32Value(heads)},
		{Key: "llama.rope.dimension_count", Value: gguf.Uint32Value(embd / heads)},
		{Key: "llama.attention.layer_norm_rms_epsilon", Value: gguf.Float32Value(1e-5)},
		{Key: "tokenizer.ggml.model", Value: gguf.StringValue("llama")},
		{Key: "tokenizer.ggml.tokens", Value: gguf.StringsValue(tokens)},
		{Key: "tokenizer.ggml.scores", Value: gguf.Float32sValue(scores)},
		{Key: "tokenizer.ggml.token_type", Value: gguf.Int32sValue(types)},
	}
	var buf bytes.Buffer
	if err := gguf.Write(&buf, kvs, tensors); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "random15M.gguf"), buf.Bytes(), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkConcurrentStreams measures aggregate decode throughput of 1 and
// of 10 concurrent greedy streams on one model: with continuous batching the
// 10 streams share every weight read, so aggregate tok/s should rise well
// above the single stream's. One op = every stream generating 64 tokens.
func BenchmarkConcurrentStreams(b *testing.B) {
	e := openRandom15M(b)
	for _, streams := range []int{1, 10} {
		b.Run(fmt.Sprintf("streams=%d", streams), func(b *testing.B) {
			var tokens atomic.Int64
			for b.Loop() {
				var wg sync.WaitGroup
				for i := range streams {
					wg.Add(1)
					go func() {
						defer wg.Done()
						res, err := e.Generate(context.Background(), assistant.GenerateRequest{
							Model: "random15M", Messages: userMessage(fmt.Sprintf("stream %d", i)), MaxTokens: 64,
						}, nil)
						if err != nil {
							b.Error(err)
							return
						}
						tokens.Add(int64(res.Usage.CompletionTokens))
					}()
				}
				wg.Wait()
			}
			b.ReportMetric(float64(tokens.Load())/b.Elapsed().Seconds(), "tok/s")
			b.ReportMetric(float64(e.Stats()[0].MaxBatch), "max-batch")
		})
	}
}

// openRandom15M opens an engine over writeRandomModel's random15M with room
// for ten concurrent streams and no prefix cache; it is closed with the
// benchmark.
func openRandom15M(b *testing.B) *Engine {
	dir := b.TempDir()
	writeRandomModel(b, dir)
	e, err := Open(dir, Options{Concurrency: 10, PrefixCache: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	return e
}
