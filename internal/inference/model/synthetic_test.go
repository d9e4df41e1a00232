package model

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"partnerapi/internal/inference/gguf"
	"partnerapi/internal/inference/kernels"
)

// synthConfig describes a random-weight model written by writeSynthetic.
type synthConfig struct {
	arch                         string
	embd, layers, heads, kvHeads int
	ff, vocab, ctx, rot          int
	bias, tied, ropeFactors      bool
	ropeBase                     float32
	weightType                   gguf.GGMLType // for 2-D weights; norms stay F32
	extraKV                      []gguf.KV
}

// writeSynthetic writes a random-weight GGUF for cfg and returns its path.
func writeSynthetic(t testing.TB, cfg synthConfig, seed uint64) string {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 99))
	vec := func(n int, scale, offset float64) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64()*scale + offset)
		}
		return v
	}
	var tensors []gguf.WriteTensor
	add := func(name string, dims []uint64, typ gguf.GGMLType, data []float32) {
		enc, err := kernels.Quantize(typ, data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		tensors = append(tensors, gguf.WriteTensor{Name: name, Dims: dims, Type: typ, Data: enc})
	}
	mat := func(name string, in, out int) {
		add(name, []uint64{uint64(in), uint64(out)}, cfg.weightType, vec(in*out, 1/math.Sqrt(float64(in)), 0))
	}
	norm := func(name string, n int) { add(name, []uint64{uint64(n)}, gguf.F32, vec(n, 0.1, 1)) }
	hd := cfg.embd / cfg.heads
	mat("token_embd.weight", cfg.embd, cfg.vocab)
	for l := 0; l < cfg.layers; l++ {
		p := fmt.Sprintf("blk.%d.", l)
		norm(p+"attn_norm.weight", cfg.embd)
		mat(p+"attn_q.weight", cfg.embd, cfg.heads*hd)
		mat(p+"attn_k.weight", cfg.embd, cfg.kvHeads*hd)
		mat(p+"attn_v.weight", cfg.embd, cfg.kvHeads*hd)
		if cfg.bias {
			add(p+"attn_q.bias", []uint64{uint64(cfg.heads * hd)}, gguf.F32, vec(cfg.heads*hd, 0.5, 0))
			add(p+"attn_k.bias", []uint64{uint64(cfg.kvHeads * hd)}, gguf.F32, vec(cfg.kvHeads*hd, 0.5, 0))
			add(p+"attn_v.bias", []uint64{uint64(cfg.kvHeads * hd)}, gguf.F32, vec(cfg.kvHeads*hd, 0.5, 0))
		}
		mat(p+"attn_output.weight", cfg.heads*hd, cfg.embd)
		norm(p+"ffn_norm.weight", cfg.embd)
		mat(p+"ffn_gate.weight", cfg.embd, cfg.ff)
		mat(p+"ffn_up.weight", cfg.embd, cfg.ff)
		mat(p+"ffn_down.weight", cfg.ff, cfg.embd)
	}
	norm("output_norm.weight", cfg.embd)
	if cfg.ropeFactors {
		factors := make([]float32, cfg.rot/2)
		for i := range factors {
			factors[i] = 1 + 7*float32(i)/float32(len(factors))
		}
		add("rope_freqs.weight", []uint64{uint64(len(factors))}, gguf.F32, factors)
	}
	if !cfg.tied {
		mat("output.weight", cfg.embd, cfg.vocab)
	}
	a := cfg.arch + "."
	kvs := []gguf.KV{
		{Key: "general.architecture", Value: gguf.StringValue(cfg.arch)},
		{Key: a + "context_length", Value: gguf.Uint32Value(uint32(cfg.ctx))},
		{Key: a + "embedding_length", Value: gguf.Uint32Value(uint32(cfg.embd))},
		{Key: a + "block_count", Value: gguf.Uint32Value(uint32(cfg.layers))},
		{Key: a + "feed_forward_length", Value: gguf.Uint32Value(uint32(cfg.ff))},
		{Key: a + "attention.head_count", Value: gguf.Uint32Value(uint32(cfg.heads))},
		{Key: a + "attention.head_count_kv", Value: gguf.Uint32Value(uint32(cfg.kvHeads))},
		{Key: a + "rope.dimension_count", Value: gguf.Uint32Value(uint32(cfg.rot))},
		{Key: a + "attention.layer_norm_rms_epsilon", Value: gguf.Float32Value(1e-6)},
	}
	kvs = append(kvs, cfg.extraKV...)
	if cfg.ropeBase > 0 {
		kvs = append(kvs, gguf.KV{Key: a + "rope.freq_base", Value: gguf.Float32Value(cfg.ropeBase)})
	}
	var buf bytes.Buffer
	if err := gguf.Write(&buf, kvs, tensors); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "synthetic.gguf")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// referenceLogits recomputes the logits after tokens from scratch in float64,
// straight from the forward-pass description (inference.md §3), with no KV
// cache and none of the model package's code. Keys and values are rounded
// to half precision, as the engine's KV cache (and llama.cpp's default F16
// cache) stores them: that rounding moves the logits by a few 1e-4, which
// would hide any other error this reference is meant to catch at 1e-5.
func referenceLogits(t testing.TB, f *gguf.File, tokens []int) []float64 {
	t.Helper()
	arch, _ := f.String("general.architecture")
	u := func(k string) int { v, _ := f.Uint(arch + "." + k); return int(v) }
	E, L, H, HKV, R := u("embedding_length"), u("block_count"), u("attention.head_count"), u("attention.head_count_kv"), u("rope.dimension_count")
	eps, _ := f.Float(arch + ".attention.layer_norm_rms_epsilon")
	base := 10000.0
	if arch == "qwen2" {
		base = 1e6
	}
	if b, ok := f.Float(arch + ".rope.freq_base"); ok {
		base = b
	}
	neox := arch == "qwen2"
	hd := E / H
	var ropeFactors []float64 // read below, once tensor() exists
	posScale := 1.0
	if typ, _ := f.String(arch + ".rope.scaling.type"); typ == "linear" {
		factor, _ := f.Float(arch + ".rope.scaling.factor")
		posScale = 1 / factor
	}
	tensor := func(name string) ([][]float64, bool) {
		ti, ok := f.Tensor(name)
		if !ok {
			return nil, false
		}
		data, _ := f.TensorData(ti)
		cols := int(ti.Dims[0])
		rows := int(ti.NumElements()) / cols
		rb := len(data) / rows
		out := make([][]float64, rows)
		row := make([]float32, cols)
		for r := range out {
			kernels.DequantizeRow(row, ti.Type, data[r*rb:(r+1)*rb])
			out[r] = make([]float64, cols)
			for i, v := range row {
				out[r][i] = float64(v)
			}
		}
		return out, true
	}
	must := func(name string) [][]float64 {
		m, ok := tensor(name)
		if !ok {
			t.Fatalf("reference: missing %s", name)
		}
		return m
	}
	vec := func(name string) []float64 {
		m, ok := tensor(name)
		if !ok {
			return nil
		}
		out := make([]float64, 0)
		for _, r := range m {
			out = append(out, r...)
		}
		return out
	}
	matvec := func(w [][]float64, x []float64) []float64 {
		y := make([]float64, len(w))
		for o, row := range w {
			for i, v := range row {
				y[o] += v * x[i]
			}
		}
		return y
	}
	rmsnorm := func(x, w []float64) []float64 {
		var ss float64
		for _, v := range x {
			ss += v * v
		}
		s := 1 / math.Sqrt(ss/float64(len(x))+eps)
		y := make([]float64, len(x))
		for i := range x {
			y[i] = x[i] * s * w[i]
		}
		return y
	}
	rope := func(v []float64, pos int) {
		for h := 0; h < len(v)/hd; h++ {
			head := v[h*hd : (h+1)*hd]
			for i := 0; i < R/2; i++ {
				theta := float64(pos) * posScale * math.Pow(base, -2*float64(i)/float64(R))
				if ropeFactors != nil {
					theta /= ropeFactors[i]
				}
				a, b := 2*i, 2*i+1
				if neox {
					a, b = i, i+R/2
				}
				x0, x1 := head[a], head[b]
				head[a] = x0*math.Cos(theta) - x1*math.Sin(theta)
				head[b] = x0*math.Sin(theta) + x1*math.Cos(theta)
			}
		}
	}
	addInto := func(x, b []float64) {
		for i := range b {
			x[i] += b[i]
		}
	}
	ropeFactors = vec("rope_freqs.weight")

	emb := must("token_embd.weight")
	xs := make([][]float64, len(tokens))
	for p, tok := range tokens {
		xs[p] = append([]float64(nil), emb[tok]...)
	}
	for l := 0; l < L; l++ {
		pre := fmt.Sprintf("blk.%d.", l)
		wq, wk, wv, wo := must(pre+"attn_q.weight"), must(pre+"attn_k.weight"), must(pre+"attn_v.weight"), must(pre+"attn_output.weight")
		bq, bk, bv := vec(pre+"attn_q.bias"), vec(pre+"attn_k.bias"), vec(pre+"attn_v.bias")
		an, fn := vec(pre+"attn_norm.weight"), vec(pre+"ffn_norm.weight")
		wg, wu, wd := must(pre+"ffn_gate.weight"), must(pre+"ffn_up.weight"), must(pre+"ffn_down.weight")
		qs, ks, vs := make([][]float64, len(xs)), make([][]float64, len(xs)), make([][]float64, len(xs))
		for p, x := range xs {
			h := rmsnorm(x, an)
			qs[p], ks[p], vs[p] = matvec(wq, h), matvec(wk, h), matvec(wv, h)
			if bq != nil {
				addInto(qs[p], bq)
				addInto(ks[p], bk)
				addInto(vs[p], bv)
			}
			rope(qs[p], p)
			rope(ks[p], p)
			roundToHalf(ks[p])
			roundToHalf(vs[p])
		}
		for p := range xs {
			o := make([]float64, H*hd)
			for h := 0; h < H; h++ {
				g := h / (H / HKV)
				q := qs[p][h*hd : (h+1)*hd]
				sc := make([]float64, p+1)
				mx := math.Inf(-1)
				for tp := 0; tp <= p; tp++ {
					for i := range q {
						sc[tp] += q[i] * ks[tp][g*hd+i]
					}
					sc[tp] /= math.Sqrt(float64(hd))
					mx = math.Max(mx, sc[tp])
				}
				var sum float64
				for tp := range sc {
					sc[tp] = math.Exp(sc[tp] - mx)
					sum += sc[tp]
				}
				for tp := range sc {
					for i := 0; i < hd; i++ {
						o[h*hd+i] += sc[tp] / sum * vs[tp][g*hd+i]
					}
				}
			}
			addInto(xs[p], matvec(wo, o))
			h := rmsnorm(xs[p], fn)
			gate, up := matvec(wg, h), matvec(wu, h)
			for i := range gate {
				gate[i] = gate[i] / (1 + math.Exp(-gate[i])) * up[i]
			}
			addInto(xs[p], matvec(wd, gate))
		}
	}
	out, ok := tensor("output.weight")
	if !ok {
		out = emb
	}
	return matvec(out, rmsnorm(xs[len(xs)-1], vec("output_norm.weight")))
}

// roundToHalf rounds every value to the nearest IEEE half float (through
// float32, as the engine converts its float32 keys and values).
func roundToHalf(x []float64) {
	for i, v := range x {
		x[i] = float64(kernels.HalfToFloat(kernels.FloatToHalf(float32(v))))
	}
}

func relRMS(ref []float64, got []float32) float64 {
	var num, den float64
	for i := range ref {
		d := ref[i] - float64(got[i])
		num += d * d
		den += ref[i] * ref[i]
	}
	return math.Sqrt(num / den)
}

func TestForwardMatchesReferenceImplementation(t *testing.T) {
	tokens := []int{3, 17, 5, 60, 2, 41, 9}
	for _, tc := range []struct {
		name string
		cfg  synthConfig
	}{
		{"llama GQA untied", synthConfig{arch: "llama", embd: 64, layers: 2, heads: 8, kvHeads: 2, ff: 96, vocab: 64, ctx: 32, rot: 8, weightType: gguf.F32}},
		{"llama partial rope base 500", synthConfig{arch: "llama", embd: 64, layers: 1, heads: 4, kvHeads: 4, ff: 64, vocab: 64, ctx: 32, rot: 8, ropeBase: 500, tied: true, weightType: gguf.F32}},
		{"qwen2 biases NeoX tied", synthConfig{arch: "qwen2", embd: 64, layers: 2, heads: 4, kvHeads: 2, ff: 96, vocab: 64, ctx: 32, rot: 16, bias: true, tied: true, weightType: gguf.F32}},
		{"llama rope_freqs factors", synthConfig{arch: "llama", embd: 64, layers: 1, heads: 4, kvHeads: 2, ff: 64, vocab: 64, ctx: 32, rot: 16, ropeFactors: true, weightType: gguf.F32}},
		{"llama linear rope scaling", synthConfig{arch: "llama", embd: 64, layers: 1, heads: 4, kvHeads: 2, ff: 64, vocab: 64, ctx: 32, rot: 16, weightType: gguf.F32,
			extraKV: []gguf.KV{{Key: "llama.rope.scaling.type", Value: gguf.StringValue("linear")}, {Key: "llama.rope.scaling.factor", Value: gguf.Float32Value(4)}}}},
		{"qwen2 F16", synthConfig{arch: "qwen2", embd: 64, layers: 1, heads: 4, kvHeads: 1, ff: 64, vocab: 64, ctx: 32, rot: 16, bias: true, weightType: gguf.F16}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := gguf.Open(writeSynthetic(t, tc.cfg, 11))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			m, err := Load(f)
			if err != nil {
				t.Fatal(err)
			}
			m.KVCache = testKVType // the tolerances are those of the half-precision cache
			want := referenceLogits(t, f, tokens)
			// Batched prompt and token-by-token decoding both match.
			got, err := m.NewSequence(0).Forward(tokens)
			if err != nil {
				t.Fatal(err)
			}
			if e := relRMS(want, got); e > 1e-5 {
				t.Errorf("batched: relative RMS error %g", e)
			}
			seq := m.NewSequence(0)
			for _, tok := range tokens {
				got, _ = seq.Forward([]int{tok})
			}
			if e := relRMS(want, got); e > 1e-5 {
				t.Errorf("one by one: relative RMS error %g", e)
			}
		})
	}
}

func TestQuantisedModelsTrackF32(t *testing.T) {
	// 256-wide layers so that every weight can take every type, K-quants
	// included. The tolerance covers weight and activation quantisation.
	tokens := []int{1, 7, 42, 99, 3}
	base := synthConfig{arch: "llama", embd: 256, layers: 2, heads: 4, kvHeads: 2, ff: 512, vocab: 256, ctx: 16, rot: 64}
	ref := func() []float64 {
		cfg := base
		cfg.weightType = gguf.F32
		f, err := gguf.Open(writeSynthetic(t, cfg, 5))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		return referenceLogits(t, f, tokens)
	}()
	// ownErr bounds the error against the float64 reference run on the same
	// file's dequantised weights: only the kernels' 8-bit activations differ,
	// so this checks the quantised dot products. f32Err bounds the drift
	// from the F32 model, which random-weight networks amplify. The F16 KV
	// cache rounds keys and values in both, but a key whose float32 value
	// sits within rounding noise of a half-precision rounding boundary can
	// round the other way in the engine (one does with the F16 weights'
	// assembly products, 9e-5; 5e-7 with the portable ones), so F16 is held
	// to 2e-4.
	for _, tc := range []struct {
		typ            gguf.GGMLType
		ownErr, f32Err float64
	}{
		{gguf.F16, 2e-4, 0.005}, {gguf.BF16, 1e-5, 0.03}, {gguf.Q8_0, 0.03, 0.05},
		{gguf.Q6_K, 0.03, 0.12}, {gguf.Q4_0, 0.03, 0.4}, {gguf.Q4_K, 0.03, 0.4},
		// Q5_0 loads rewritten as Q8_0 (kernels.AsQ8_0), through the Q8_0
		// kernels.
		{gguf.Q5_0, 0.03, 0.25}, {gguf.Q5_1, 0.03, 0.25}, {gguf.Q5_K, 0.03, 0.25},
		// Q3_K, IQ4_NL and Q4_1 load rewritten as Q6_K, Q8_0 and Q5_1
		// (kernels.Rewrite).
		{gguf.Q3_K, 0.03, 0.8}, {gguf.IQ4_NL, 0.03, 0.4}, {gguf.Q4_1, 0.03, 0.4},
		// Q2_K runs packed on AVX2, through dotQ2KGo elsewhere.
		{gguf.Q2_K, 0.03, 1.2},
	} {
		t.Run(tc.typ.String(), func(t *testing.T) {
			cfg := base
			cfg.weightType = tc.typ
			f, err := gguf.Open(writeSynthetic(t, cfg, 5))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			m, err := Load(f)
			if err != nil {
				t.Fatal(err)
			}
			m.KVCache = testKVType // the tolerances are those of the half-precision cache
			got, err := m.NewSequence(0).Forward(tokens)
			if err != nil {
				t.Fatal(err)
			}
			own := relRMS(referenceLogits(t, f, tokens), got)
			drift := relRMS(ref, got)
			t.Logf("%v: logits relative RMS error %.2g vs its own weights in float64, %.2g vs F32", tc.typ, own, drift)
			if own > tc.ownErr || drift > tc.f32Err {
				t.Errorf("errors %.4f / %.4f exceed %.4f / %.4f", own, drift, tc.ownErr, tc.f32Err)
			}
		})
	}
}

func TestLoadRefusesInconsistentModels(t *testing.T) {
	good := synthConfig{arch: "llama", embd: 32, layers: 1, heads: 4, kvHeads: 2, ff: 32, vocab: 32, ctx: 8, rot: 8, weightType: gguf.F32}
	for _, tc := range []struct {
		name   string
		mutate func(*synthConfig)
		want   string
	}{
		{"unknown architecture", func(c *synthConfig) { c.arch = "mamba" }, "unsupported architecture"},
		{"heads not a multiple of kv heads", func(c *synthConfig) { c.kvHeads = 3 }, "head_count_kv"},
		{"qwen2 without biases", func(c *synthConfig) { c.arch = "qwen2" }, "attn_q.bias"},
		{"rope wider than a head", func(c *synthConfig) { c.rot = 16 }, "rope.dimension_count"},
		{"yarn rope scaling", func(c *synthConfig) {
			c.extraKV = []gguf.KV{{Key: "llama.rope.scaling.type", Value: gguf.StringValue("yarn")}, {Key: "llama.rope.scaling.factor", Value: gguf.Float32Value(4)}}
		}, "not supported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := good
			tc.mutate(&cfg)
			f, err := gguf.Open(writeSynthetic(t, cfg, 1))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := Load(f); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error mentioning %q", err, tc.want)
			}
		})
	}
}
