package model

import (
	"fmt"
	"math"

	"partnerapi/internal/inference/gguf"
	"partnerapi/internal/inference/hugepage"
	"partnerapi/internal/inference/kernels"
)

// Config holds the hyperparameters read from the GGUF metadata.
type Config struct {
	Arch       Architecture
	NEmbd      int // model width
	NLayer     int
	NHead      int
	NHeadKV    int
	HeadDim    int // per-head width of q, k and v
	NFF        int
	NVocab     int
	NCtx       int // trained context length
	NRot       int // dimensions RoPE rotates per head
	NormEps    float32
	RopeBase   float64
	RopeFreqSc float64 // position scale: 1/factor for linear rope scaling, else 1
	// RopeFactors divides each rotation frequency (Llama 3.1's rope_freqs
	// tensor, n_rot/2 values); nil when absent.
	RopeFactors []float32
}

// QDim is the width of the concatenated query heads.
func (c Config) QDim() int { return c.NHead * c.HeadDim }

// KVDim is the width of the concatenated key (or value) heads.
func (c Config) KVDim() int { return c.NHeadKV * c.HeadDim }

// Layer holds one transformer block's weights.
type Layer struct {
	AttnNorm   []float32
	Wq, Wk, Wv kernels.Matrix
	Bq, Bk, Bv []float32 // nil without biases
	Wo         kernels.Matrix
	FFNNorm    []float32
	Wgate, Wup kernels.Matrix
	Wdown      kernels.Matrix
}

// Model is a loaded model. It is read-only and safe for concurrent use by
// many Sequences.
type Model struct {
	Config
	TokenEmbd  kernels.Matrix
	OutputNorm []float32
	Output     kernels.Matrix
	Layers     []Layer
	// KVCache is the KV cache type of the sequences NewSequence makes from
	// now on (those made earlier keep theirs); set it before use.
	KVCache KVType

	kvPool *kvPool // released KV caches, for reuse (kvpool.go)
}

// Load builds a Model over the tensors of f. The weights are views into f's
// mapping (F32 norms and biases included; the AVX-512 kernels also get
// packed heap copies of the Q8_0 and Q4_0 matrices), so f must stay open while the
// Model is used.
func Load(f *gguf.File) (*Model, error) {
	archName, _ := f.String("general.architecture")
	arch, err := lookupArchitecture(archName)
	if err != nil {
		return nil, err
	}
	key := func(k string) string { return archName + "." + k }
	need := func(k string) (int, error) {
		v, ok := f.Uint(key(k))
		if !ok || v == 0 || v > 1<<24 {
			return 0, fmt.Errorf("model: metadata %s is missing or out of range", key(k))
		}
		return int(v), nil
	}
	c := Config{Arch: arch}
	for _, p := range []struct {
		dst *int
		k   string
	}{
		{&c.NEmbd, "embedding_length"}, {&c.NLayer, "block_count"}, {&c.NHead, "attention.head_count"},
		{&c.NFF, "feed_forward_length"}, {&c.NCtx, "context_length"},
	} {
		if *p.dst, err = need(p.k); err != nil {
			return nil, err
		}
	}
	c.NHeadKV = c.NHead
	if _, ok := f.Get(key("attention.head_count_kv")); ok {
		if c.NHeadKV, err = need("attention.head_count_kv"); err != nil {
			return nil, err
		}
	}
	if c.NHead%c.NHeadKV != 0 {
		return nil, fmt.Errorf("model: head_count %d is not a multiple of head_count_kv %d", c.NHead, c.NHeadKV)
	}
	c.HeadDim = c.NEmbd / c.NHead
	if _, ok := f.Get(key("attention.key_length")); ok {
		if c.HeadDim, err = need("attention.key_length"); err != nil {
			return nil, err
		}
		if vl, ok := f.Uint(key("attention.value_length")); ok && int(vl) != c.HeadDim {
			return nil, fmt.Errorf("model: key_length %d differs from value_length %d", c.HeadDim, vl)
		}
	}
	c.NRot = c.HeadDim
	if _, ok := f.Get(key("rope.dimension_count")); ok {
		if c.NRot, err = need("rope.dimension_count"); err != nil {
			return nil, err
		}
	}
	if c.NRot > c.HeadDim || c.NRot%2 != 0 {
		return nil, fmt.Errorf("model: rope.dimension_count %d does not fit head dim %d", c.NRot, c.HeadDim)
	}
	eps := arch.DefaultNormEps
	if v, ok := f.Float(key("attention.layer_norm_rms_epsilon")); ok {
		eps = v
	}
	c.NormEps = float32(eps)
	c.RopeBase = arch.DefaultRopeBase
	if v, ok := f.Float(key("rope.freq_base")); ok && v > 0 {
		c.RopeBase = v
	}
	if c.RopeFreqSc, err = ropeScale(f, key); err != nil {
		return nil, err
	}

	m := &Model{Config: c}
	m.kvPool = newKVPool(m)
	l := loader{f: f}
	m.TokenEmbd = l.matrix("token_embd.weight", c.NEmbd, -1)
	if l.err != nil {
		return nil, l.err
	}
	m.NVocab = m.TokenEmbd.Rows
	m.OutputNorm = l.vector("output_norm.weight", c.NEmbd)
	if _, ok := f.Tensor("output.weight"); ok || !arch.MayTieOutput {
		m.Output = l.matrix("output.weight", c.NEmbd, m.NVocab)
	} else {
		m.Output = m.TokenEmbd
	}
	if _, ok := f.Tensor("rope_freqs.weight"); ok {
		m.RopeFactors = l.vector("rope_freqs.weight", c.NRot/2)
		for _, v := range m.RopeFactors {
			if !(v > 0) || math.IsInf(float64(v), 0) {
				return nil, fmt.Errorf("model: rope_freqs.weight holds %v; factors must be positive and finite", v)
			}
		}
	}
	m.Layers = make([]Layer, c.NLayer)
	for i := range m.Layers {
		p := fmt.Sprintf("blk.%d.", i)
		ly := &m.Layers[i]
		ly.AttnNorm = l.vector(p+"attn_norm.weight", c.NEmbd)
		ly.Wq = l.matrix(p+"attn_q.weight", c.NEmbd, c.QDim())
		ly.Wk = l.matrix(p+"attn_k.weight", c.NEmbd, c.KVDim())
		ly.Wv = l.matrix(p+"attn_v.weight", c.NEmbd, c.KVDim())
		ly.Wo = l.matrix(p+"attn_output.weight", c.QDim(), c.NEmbd)
		ly.FFNNorm = l.vector(p+"ffn_norm.weight", c.NEmbd)
		ly.Wgate = l.matrix(p+"ffn_gate.weight", c.NEmbd, c.NFF)
		ly.Wup = l.matrix(p+"ffn_up.weight", c.NEmbd, c.NFF)
		ly.Wdown = l.matrix(p+"ffn_down.weight", c.NFF, c.NEmbd)
		_, hasBias := f.Tensor(p + "attn_q.bias")
		if arch.QKVBias || (arch.OptionalQKVBias && hasBias) {
			ly.Bq = l.vector(p+"attn_q.bias", c.QDim())
			ly.Bk = l.vector(p+"attn_k.bias", c.KVDim())
			ly.Bv = l.vector(p+"attn_v.bias", c.KVDim())
		}
	}
	if l.err != nil {
		return nil, l.err
	}
	// The AVX-512 and AVX2 kernels read Q8_0 and Q4_0 weights repacked 16
	// or 8 rows at a time (kernels.Pack, a no-op for the other families and
	// types): the copy is made once here, on the heap, and the mapping stays
	// for the embedding rows and the rows past a matrix's last group. A tied output projection packs only as Output.
	// Every matrix's copy is carved, in the order a step reads them, out of
	// one buffer in huge pages (hugepage.Make): a step streams them all, and
	// with a heap allocation per matrix in 4 KB pages it crossed a page (a
	// possible TLB miss, and a restart of the hardware prefetcher) every
	// 4 KB. One-stream decode of a random 135M model, alternating in one
	// process against the per-matrix copies: Q8_0 1.08×, Q4_0 1.10× (ten
	// streams, compute-bound, 1.01×); against one buffer in 4 KB pages
	// 1.02–1.04× (BenchmarkHugeStepSideBySide).
	// Once packed, a matrix's mapped pages are dropped from the process's
	// resident memory: the packing read them all, and the products never
	// read them again (embedding lookups fault in the few rows they need).
	var order []*kernels.Matrix
	for i := range m.Layers {
		ly := &m.Layers[i]
		order = append(order, &ly.Wq, &ly.Wk, &ly.Wv, &ly.Wo, &ly.Wgate, &ly.Wup, &ly.Wdown)
	}
	order = append(order, &m.Output)
	total := 0
	for _, w := range order {
		total += kernels.PackedSize(*w)
	}
	buf := hugepage.Make[byte](total)
	for _, w := range order {
		n := kernels.PackedSize(*w)
		if n == 0 {
			continue
		}
		*w = kernels.PackInto(*w, buf[:n:n])
		buf = buf[n:]
		if !f.Maps(w.Data) {
			continue // a rewritten matrix (Q5_0) on the heap
		}
		if err := f.DropResident(w.Data); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// ropeScale reads the rope scaling keys: linear scaling divides positions by
// the factor; other schemes (YaRN, LongRoPE) change the frequencies in ways
// this engine does not implement, so such models are refused rather than
// run with wrong positions.
func ropeScale(f *gguf.File, key func(string) string) (float64, error) {
	factor := 1.0
	if v, ok := f.Float(key("rope.scale_linear")); ok && v > 0 {
		factor = v
	}
	typ, _ := f.String(key("rope.scaling.type"))
	switch typ {
	case "", "none":
	case "linear":
		if v, ok := f.Float(key("rope.scaling.factor")); ok && v > 0 {
			factor = v
		}
	default:
		if v, ok := f.Float(key("rope.scaling.factor")); ok && v > 1 {
			return 0, fmt.Errorf("model: rope scaling %q is not supported", typ)
		}
	}
	return 1 / factor, nil
}

// loader collects the first error while building the model.
type loader struct {
	f   *gguf.File
	err error
}

// matrix returns the named weight as a matrix of rows×cols (rows -1: any).
func (l *loader) matrix(name string, cols, rows int) kernels.Matrix {
	if l.err != nil {
		return kernels.Matrix{}
	}
	t, ok := l.f.Tensor(name)
	if !ok {
		l.err = fmt.Errorf("model: tensor %s is missing", name)
		return kernels.Matrix{}
	}
	if len(t.Dims) != 2 || t.Dims[0] != uint64(cols) || (rows >= 0 && t.Dims[1] != uint64(rows)) || t.Dims[1] > math.MaxInt32 {
		l.err = fmt.Errorf("model: tensor %s has shape %v, want [%d, %d]", name, t.Dims, cols, rows)
		return kernels.Matrix{}
	}
	data, err := l.f.TensorData(t)
	if err != nil {
		l.err = err
		return kernels.Matrix{}
	}
	m := kernels.Matrix{Type: t.Type, Rows: int(t.Dims[1]), Cols: cols, Data: data}
	if kernels.Rewritten(m.Type) && kernels.PackedSize(m) == 0 {
		// Q5_0, Q3_K, IQ4_NL and Q4_1 are Q8_0, Q6_K, Q8_0 and Q5_1 in
		// fewer bytes (kernels.Rewrite): where the kernels in use do not
		// pack them as they are, they are rewritten onto the heap, every
		// kernel of the wider type serves them, and the mapped bytes are
		// never read again.
		if m, err = kernels.Rewrite(m); err != nil {
			l.err = fmt.Errorf("model: tensor %s: %w", name, err)
			return m
		}
		if err := l.f.DropResident(data); err != nil {
			l.err = err
		}
	}
	if err := m.Validate(); err != nil {
		l.err = fmt.Errorf("model: tensor %s: %w", name, err)
		return m
	}
	return m
}

// vector returns a 1-D tensor as floats: F32 data is viewed in place, other
// types (rare for norms) are expanded onto the heap.
func (l *loader) vector(name string, n int) []float32 {
	if l.err != nil {
		return nil
	}
	t, ok := l.f.Tensor(name)
	if !ok {
		l.err = fmt.Errorf("model: tensor %s is missing", name)
		return nil
	}
	if len(t.Dims) != 1 || t.Dims[0] != uint64(n) {
		l.err = fmt.Errorf("model: tensor %s has shape %v, want [%d]", name, t.Dims, n)
		return nil
	}
	if !kernels.Supported(t.Type) || n%t.Type.BlockSize() != 0 {
		l.err = fmt.Errorf("model: tensor %s has unsupported type %v", name, t.Type)
		return nil
	}
	data, err := l.f.TensorData(t)
	if err != nil {
		l.err = err
		return nil
	}
	if t.Type == 0 { // F32
		return kernels.Float32View(data)
	}
	out := make([]float32, n)
	kernels.DequantizeRow(out, t.Type, data)
	return out
}
