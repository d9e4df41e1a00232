package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"partnerapi/internal/inference/gguf"
	"partnerapi/internal/inference/kernels"
	"partnerapi/internal/inference/model"
)

func init() { benchmarks["engine"] = runBenchEngine }

// engineShape is a real model's geometry (inference.md §8); the benchmark
// fills it with random weights because throughput does not depend on values.
type engineShape struct {
	name, arch                            string
	embd, ff, layers, heads, kvHeads, voc int
}

var engineShapes = []engineShape{
	{"15m", "llama", 288, 768, 6, 6, 6, 32000},
	{"135m", "llama", 576, 1536, 30, 9, 3, 49152},
	{"0.5b", "qwen2", 896, 4864, 24, 14, 2, 151936},
}

// engineResult is one case of `bench engine --json`.
type engineResult struct {
	Shape            string  `json:"shape"`
	Quant            string  `json:"quant"`
	Streams          int     `json:"streams"`
	PrefillTokS      float64 `json:"prefill_tok_s"`
	DecodeTokS       float64 `json:"decode_tok_s"`
	BandwidthGBs     float64 `json:"bandwidth_gb_s"`
	RooflineFraction float64 `json:"roofline_fraction"`
	WeightBytesToken int64   `json:"weight_bytes_per_token"`
	AsmKernels       bool    `json:"asm_kernels"`
}

// runBenchEngine is `partnerapi bench engine`: prefill and decode tok/s of
// the embedded engine on random-weight GGUFs of real shapes, with the
// machine's memory read bandwidth measured in the same run so decode can be
// judged against its roofline (decode streams every weight once per token).
func runBenchEngine(ctx context.Context, args []string, getenv func(string) string, io stdio) error {
	fs := flag.NewFlagSet("bench engine", flag.ContinueOnError)
	shapes := fs.String("shape", "15m", "model shapes, comma-separated: 15m, 135m, 0.5b")
	quants := fs.String("quant", "q8_0", "weight types, comma-separated: q8_0, q4_0")
	streams := fs.Int("streams", 1, "concurrent sequences (only 1 is supported)")
	prompt := fs.Int("prompt", 256, "prompt tokens for the prefill measurement")
	gen := fs.Int("gen", 128, "tokens for the decode measurement")
	bwMB := fs.Int("bandwidth-mb", 512, "buffer size for the bandwidth probe (MB, > 256 to defeat caches)")
	asJSON := fs.Bool("json", false, "print one JSON object per case")
	if err := parseFlags(fs, args, getenv); err != nil {
		return err
	}
	if *streams != 1 {
		return errors.New("--streams: only 1 stream is supported for now")
	}
	if *prompt < 1 || *gen < 1 {
		return errors.New("--prompt and --gen must be at least 1")
	}
	var cases []engineShape
	for _, s := range strings.Split(*shapes, ",") {
		sh, ok := findShape(strings.TrimSpace(s))
		if !ok {
			return fmt.Errorf("--shape: unknown shape %q (have 15m, 135m, 0.5b)", s)
		}
		cases = append(cases, sh)
	}
	var types []gguf.GGMLType
	for _, q := range strings.Split(*quants, ",") {
		switch strings.TrimSpace(strings.ToLower(q)) {
		case "q8_0":
			types = append(types, gguf.Q8_0)
		case "q4_0":
			types = append(types, gguf.Q4_0)
		default:
			return fmt.Errorf("--quant: unknown type %q (have q8_0, q4_0)", q)
		}
	}
	tmp, err := os.MkdirTemp("", "partnerapi-engine-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if !*asJSON {
		fmt.Fprintf(io.out, "asm kernels: %v\n", kernels.AsmEnabled())
		fmt.Fprintf(io.out, "%-6s %-5s %12s %12s %10s %8s %9s\n", "shape", "quant", "prefill t/s", "decode t/s", "MB/token", "GB/s", "roofline")
	}
	for _, sh := range cases {
		for _, typ := range types {
			if err := ctx.Err(); err != nil {
				return err
			}
			res, err := benchEngineCase(tmp, sh, typ, *prompt, *gen)
			if err != nil {
				return fmt.Errorf("%s %v: %w", sh.name, typ, err)
			}
			// Bandwidth is probed right after each case rather than once per
			// run: on a shared machine the available bandwidth drifts, and the
			// roofline fraction is only meaningful against a nearby probe.
			bw := measureBandwidth(*bwMB << 20)
			res.Streams = 1
			res.BandwidthGBs = bw / 1e9
			res.RooflineFraction = res.DecodeTokS / (bw / float64(res.WeightBytesToken))
			if *asJSON {
				if err := json.NewEncoder(io.out).Encode(res); err != nil {
					return err
				}
				continue
			}
			fmt.Fprintf(io.out, "%-6s %-5s %12.1f %12.1f %10.1f %8.1f %8.0f%%\n", res.Shape, res.Quant,
				res.PrefillTokS, res.DecodeTokS, float64(res.WeightBytesToken)/1e6, res.BandwidthGBs, 100*res.RooflineFraction)
		}
	}
	return nil
}

func findShape(name string) (engineShape, bool) {
	for _, s := range engineShapes {
		if s.name == name {
			return s, true
		}
	}
	return engineShape{}, false
}

func benchEngineCase(dir string, sh engineShape, typ gguf.GGMLType, prompt, gen int) (engineResult, error) {
	path := filepath.Join(dir, sh.name+"-"+strings.ToLower(typ.String())+".gguf")
	if err := writeEngineGGUF(path, sh, typ, prompt+gen+8); err != nil {
		return engineResult{}, err
	}
	defer os.Remove(path)
	f, err := gguf.Open(path)
	if err != nil {
		return engineResult{}, err
	}
	defer f.Close()
	m, err := model.Load(f)
	if err != nil {
		return engineResult{}, err
	}
	res := engineResult{Shape: sh.name, Quant: strings.ToLower(typ.String()), AsmKernels: kernels.AsmEnabled()}
	// Decode reads every layer matrix and the output projection once per
	// token; norms and the one embedding row are noise.
	res.WeightBytesToken = int64(len(m.Output.Data))
	for _, ly := range m.Layers {
		for _, w := range []kernels.Matrix{ly.Wq, ly.Wk, ly.Wv, ly.Wo, ly.Wgate, ly.Wup, ly.Wdown} {
			res.WeightBytesToken += int64(len(w.Data))
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	tokens := make([]int, prompt)
	for i := range tokens {
		tokens[i] = r.IntN(m.NVocab)
	}
	seq := m.NewSequence(prompt + gen + 1)
	defer seq.Release()
	// A warm-up pass faults the mapped weights in, so the timed passes
	// measure compute and memory, not page faults on first touch.
	if _, err := seq.Forward(tokens[:min(prompt, 8)]); err != nil {
		return res, err
	}
	seq.Reset()
	start := time.Now()
	logits, err := seq.Forward(tokens)
	if err != nil {
		return res, err
	}
	res.PrefillTokS = float64(prompt) / time.Since(start).Seconds()
	next := argmax(logits)
	start = time.Now()
	for i := 0; i < gen; i++ {
		if logits, err = seq.Forward([]int{next}); err != nil {
			return res, err
		}
		next = argmax(logits)
	}
	res.DecodeTokS = float64(gen) / time.Since(start).Seconds()
	return res, nil
}

func argmax(x []float32) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}

// writeEngineGGUF writes a random-weight model of shape sh. Quantising a
// whole 0.5B model from fresh random floats takes longer than the benchmark,
// so every matrix tiles one quantised random pool; the mapped pages are
// still distinct, which is all the memory system sees.
func writeEngineGGUF(path string, sh engineShape, typ gguf.GGMLType, ctxLen int) error {
	r := rand.New(rand.NewPCG(3, 4))
	const poolValues = 1 << 20
	vals := make([]float32, poolValues)
	for i := range vals {
		vals[i] = float32(r.NormFloat64()) * 0.05
	}
	pool, err := kernels.Quantize(typ, vals)
	if err != nil {
		return err
	}
	blockBytes := typ.TypeSize()
	var tensors []gguf.WriteTensor
	mat := func(name string, in, out int) {
		data := make([]byte, in*out/typ.BlockSize()*blockBytes)
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

// measureBandwidth sums a buffer of n bytes with the float kernel on the
// engine's worker pool (the same threads decode uses) and returns the best
// of a few passes in bytes per second.
func measureBandwidth(n int) float64 {
	buf := make([]float32, n/4)
	for i := range buf { // touch every page before timing
		buf[i] = 1
	}
	const parts = 64
	chunk := len(buf) / parts
	sums := make([]float32, parts)
	best := 0.0
	for pass := 0; pass < 4; pass++ {
		start := time.Now()
		kernels.ParallelFor(parts, len(buf), func(lo, hi int) {
			for p := lo; p < hi; p++ {
				sums[p] = kernels.SumF32(buf[p*chunk : (p+1)*chunk])
			}
		})
		if rate := float64(parts*chunk*4) / time.Since(start).Seconds(); rate > best {
			best = rate
		}
	}
	return best
}
