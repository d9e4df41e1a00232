package main

import (
	"path/filepath"
	"testing"

	"partnerapi/internal/inference/gguf"
	"partnerapi/internal/inference/model"
)

// loadMix writes shape in quant, checks the written tensors' types against
// want and returns the file loaded as a model.
func loadMix(t *testing.T, shape string, quant engineQuant, want map[string]gguf.GGMLType) *model.Model {
	t.Helper()
	sh, _ := findShape(shape)
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := writeEngineGGUF(path, sh, quant, 64); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	for name, typ := range want {
		tn, ok := f.Tensor(name)
		if !ok || tn.Type != typ {
			t.Errorf("%s: %v (present %v), want %v", name, tn.Type, ok, typ)
		}
	}
	m, err := model.Load(f)
	if err != nil {
		t.Fatalf("the %s file does not load: %v", quant.name, err)
	}
	return m
}

// TestQ4KMTypes checks the q4_k_m mix against llama.cpp's rules on the
// stories15M shape (288 wide, down projections 768 wide, six layers):
// use_more_bits picks layers 2 and 5 of six for Q6_K, rows that are not a
// multiple of 256 fall back to Q5_0 or Q8_0, and the written file loads.
func TestQ4KMTypes(t *testing.T) {
	loadMix(t, "15m", q4KM, map[string]gguf.GGMLType{
		"token_embd.weight":        gguf.Q8_0, // Q6_K, 288 wide
		"blk.0.attn_q.weight":      gguf.Q5_0, // Q4_K, 288 wide
		"blk.0.attn_v.weight":      gguf.Q5_0,
		"blk.2.attn_v.weight":      gguf.Q8_0, // Q6_K, 288 wide
		"blk.0.ffn_down.weight":    gguf.Q4_K, // 768 wide
		"blk.2.ffn_down.weight":    gguf.Q6_K,
		"blk.5.ffn_down.weight":    gguf.Q6_K,
		"blk.3.ffn_down.weight":    gguf.Q4_K,
		"blk.1.ffn_gate.weight":    gguf.Q5_0,
		"blk.1.attn_output.weight": gguf.Q5_0,
	})
}

// TestQ3KMTypes checks the q3_k_m mix on the SmolLM2-135M shape (576 wide,
// down projections 1536 wide, 30 layers): Q3_K only where rows are
// multiples of 256, IQ4_NL and the other fallbacks elsewhere, and that the
// written file loads.
func TestQ3KMTypes(t *testing.T) {
	m := loadMix(t, "135m", q3KM, map[string]gguf.GGMLType{
		"token_embd.weight":        gguf.Q8_0,   // Q6_K, 576 wide
		"blk.0.attn_q.weight":      gguf.IQ4_NL, // Q3_K, 576 wide
		"blk.1.attn_v.weight":      gguf.Q5_1,   // Q5_K in the first two layers
		"blk.2.attn_v.weight":      gguf.Q5_0,   // Q4_K
		"blk.1.attn_output.weight": gguf.Q5_0,   // Q4_K
		"blk.0.ffn_down.weight":    gguf.Q5_K,   // 1536 wide, first sixteenth
		"blk.2.ffn_down.weight":    gguf.Q4_K,
		"blk.3.ffn_gate.weight":    gguf.IQ4_NL,
	})
	// IQ4_NL stays itself where the kernels pack it (AVX2), else it is
	// rewritten as Q8_0.
	if wq := m.Layers[0].Wq; !(wq.Type == gguf.IQ4_NL && wq.Packed()) && wq.Type != gguf.Q8_0 {
		t.Errorf("an IQ4_NL matrix loaded as %v (packed %v), want it packed or its Q8_0 rewrite", wq.Type, wq.Packed())
	}
}
