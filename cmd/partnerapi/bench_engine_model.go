package main

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"

	"partnerapi/internal/inference/gguf"
	"partnerapi/internal/inference/kernels"
)

// writeEngineGGUF writes a random-weight model of shape sh with a filler
// SentencePiece vocabulary (so the local engine loads it like any served
// model; the benchmark drives it by token ids). Quantising a whole 0.5B
// model from fresh random floats takes longer than the benchmark, so every
// matrix tiles one quantised random pool; the mapped pages are still
// distinct, which is all the memory system sees.
func writeEngineGGUF(path string, sh engineShape, q engineQuant, ctxLen int) error {
	r := rand.New(rand.NewPCG(3, 4))
	const poolValues = 1 << 20
	vals := make([]float32, poolValues)
	for i := range vals {
		vals[i] = float32(r.NormFloat64()) * 0.05
	}
	pools := map[gguf.GGMLType][]byte{}
	var tensors []gguf.WriteTensor
	var err error
	layer := -1
	mat := func(name string, in, out int) {
		typ := q.typeFor(strings.TrimPrefix(name, fmt.Sprintf("blk.%d.", layer)), layer, sh.layers, in)
		pool, ok := pools[typ]
		if !ok {
			if pool, err = kernels.Quantize(typ, vals); err != nil {
				return
			}
			pools[typ] = pool
		}
		data := make([]byte, in*out/typ.BlockSize()*typ.TypeSize())
		for off := 0; off < len(data); off += len(pool) {
			copy(data[off:], pool)
		}
		tensors = append(tensors, gguf.WriteTensor{Name: name, Dims: []uint64{uint64(in), uint64(out)}, Type: typ, Data: data})
	}
	vec := func(name string, n int, v float32) {
		x := make([]float32, n)
		for i := range x {
			x[i] = v
		}
		data, _ := kernels.Quantize(gguf.F32, x)
		tensors = append(tensors, gguf.WriteTensor{Name: name, Dims: []uint64{uint64(n)}, Type: gguf.F32, Data: data})
	}
	hd := sh.embd / sh.heads
	// Tied output, as in all three source models.
	mat("token_embd.weight", sh.embd, sh.voc)
	for l := 0; l < sh.layers; l++ {
		layer = l
		p := fmt.Sprintf("blk.%d.", l)
		vec(p+"attn_norm.weight", sh.embd, 1)
		mat(p+"attn_q.weight", sh.embd, sh.heads*hd)
		mat(p+"attn_k.weight", sh.embd, sh.kvHeads*hd)
		mat(p+"attn_v.weight", sh.embd, sh.kvHeads*hd)
		if sh.arch == "qwen2" { // the loader requires qwen2's q/k/v biases
			vec(p+"attn_q.bias", sh.heads*hd, 0)
			vec(p+"attn_k.bias", sh.kvHeads*hd, 0)
			vec(p+"attn_v.bias", sh.kvHeads*hd, 0)
		}
		mat(p+"attn_output.weight", sh.heads*hd, sh.embd)
		vec(p+"ffn_norm.weight", sh.embd, 1)
		mat(p+"ffn_gate.weight", sh.embd, sh.ff)
		mat(p+"ffn_up.weight", sh.embd, sh.ff)
		mat(p+"ffn_down.weight", sh.ff, sh.embd)
	}
	vec("output_norm.weight", sh.embd, 1)
	if err != nil {
		return err
	}
	a := sh.arch + "."
	kvs := []gguf.KV{
		{Key: "general.architecture", Value: gguf.StringValue(sh.arch)},
		{Key: a + "context_length", Value: gguf.Uint32Value(uint32(ctxLen))},
		{Key: a + "embedding_length", Value: gguf.Uint32Value(uint32(sh.embd))},
		{Key: a + "block_count", Value: gguf.Uint32Value(uint32(sh.layers))},
		{Key: a + "feed_forward_length", Value: gguf.Uint32Value(uint32(sh.ff))},
		{Key: a + "attention.head_count", Value: gguf.Uint32Value(uint32(sh.heads))},
		{Key: a + "attention.head_count_kv", Value: gguf.Uint32Value(uint32(sh.kvHeads))},
		{Key: a + "attention.layer_norm_rms_epsilon", Value: gguf.Float32Value(1e-6)},
	}
	kvs = append(kvs, fillerVocabulary(sh.voc)...)
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(out, 1<<20)
	if err := gguf.Write(w, kvs, tensors); err != nil {
		out.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// fillerVocabulary is an SPM vocabulary of n tokens: unk, BOS, EOS, the 256
// byte tokens and filler pieces. Its text is meaningless, but it lets the
// tokenizer load and match the embedding table.
func fillerVocabulary(n int) []gguf.KV {
	tokens := make([]string, n)
	types := make([]int32, n)
	scores := make([]float32, n)
	tokens[0], tokens[1], tokens[2] = "<unk>", "<s>", "</s>"
	types[0], types[1], types[2] = 2, 3, 3
	for b := range 256 {
		tokens[3+b], types[3+b] = fmt.Sprintf("<0x%02X>", b), 6
	}
	for i := 259; i < n; i++ {
		tokens[i], types[i], scores[i] = fmt.Sprintf("▁w%d", i), 1, -float32(i)
	}
	return []gguf.KV{
		{Key: "tokenizer.ggml.model", Value: gguf.StringValue("llama")},
		{Key: "tokenizer.ggml.tokens", Value: gguf.StringsValue(tokens)},
		{Key: "tokenizer.ggml.scores", Value: gguf.Float32sValue(scores)},
		{Key: "tokenizer.ggml.token_type", Value: gguf.Int32sValue(types)},
	}
}
