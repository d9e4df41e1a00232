package main

import (
	"fmt"
	"strings"

	"partnerapi/internal/inference/gguf"
)

// engineQuant is how `bench engine` quantises a random-weight model: one
// type for every matrix, or a mix as llama.cpp's quantiser writes it.
type engineQuant struct {
	name string
	// typeFor is the type of tensor (its GGUF name without the block
	// prefix) of layer `layer` of n, whose rows are cols long (-1 for the
	// embedding, which the models share with the output projection).
	typeFor func(tensor string, layer, n, cols int) gguf.GGMLType
}

func uniformQuant(t gguf.GGMLType) engineQuant {
	return engineQuant{name: strings.ToLower(t.String()), typeFor: func(string, int, int, int) gguf.GGMLType { return t }}
}

// q4KM mirrors llama.cpp's Q4_K_M (llama_tensor_get_type): Q4_K, with Q6_K
// for the tied embedding/output and for the value and down projections of
// the layers use_more_bits picks; a tensor whose rows are not a multiple of
// 256 falls back to Q5_0 (for Q4_K) or Q8_0 (for Q6_K). For the three
// bench shapes (288, 576 and 896 wide) that leaves Q4_K and Q6_K to the
// down projections (768, 1536 and 4864 wide) and makes everything else
// Q5_0 or Q8_0, as in the published Q4_K_M files of those models.
var q4KM = engineQuant{name: "q4_k_m", typeFor: func(tensor string, layer, n, cols int) gguf.GGMLType {
	moreBits := func(i, n int) bool { return i < n/8 || i >= 7*n/8 || (i-n/8)%3 == 2 }
	t := gguf.Q4_K
	switch {
	case tensor == "token_embd.weight":
		t = gguf.Q6_K
	case (tensor == "attn_v.weight" || tensor == "ffn_down.weight") && moreBits(layer, n):
		t = gguf.Q6_K
	}
	if cols%256 != 0 {
		if t == gguf.Q6_K {
			return gguf.Q8_0
		}
		return gguf.Q5_0
	}
	return t
}}

// q3KM mirrors llama.cpp's Q3_K_M as far as these models go: Q3_K, with
// Q6_K for the tied embedding/output, Q4_K for the attention output, the
// value projection Q5_K in the first two layers and Q4_K after, the down
// projection Q5_K in the first sixteenth of the layers and Q4_K after; a
// tensor whose rows are not a multiple of 256 falls back to IQ4_NL (for
// Q3_K), Q5_0 (Q4_K), Q5_1 (Q5_K) or Q8_0 (Q6_K). The loader rewrites Q3_K
// as Q6_K where it has no packed Q3_K kernels and IQ4_NL as Q8_0
// (kernels.Rewrite), so for the three small bench shapes most matrices run
// as Q8_0.
var q3KM = engineQuant{name: "q3_k_m", typeFor: func(tensor string, layer, n, cols int) gguf.GGMLType {
	t := gguf.Q3_K
	switch {
	case tensor == "token_embd.weight":
		t = gguf.Q6_K
	case tensor == "attn_output.weight":
		t = gguf.Q4_K
	case tensor == "attn_v.weight" && layer < 2:
		t = gguf.Q5_K
	case tensor == "attn_v.weight":
		t = gguf.Q4_K
	case tensor == "ffn_down.weight" && layer < n/16:
		t = gguf.Q5_K
	case tensor == "ffn_down.weight":
		t = gguf.Q4_K
	}
	if cols%256 != 0 {
		return map[gguf.GGMLType]gguf.GGMLType{gguf.Q3_K: gguf.IQ4_NL, gguf.Q4_K: gguf.Q5_0, gguf.Q5_K: gguf.Q5_1, gguf.Q6_K: gguf.Q8_0}[t]
	}
	return t
}}

func parseEngineQuants(list string) ([]engineQuant, error) {
	var qs []engineQuant
	for _, q := range strings.Split(list, ",") {
		switch strings.TrimSpace(strings.ToLower(q)) {
		case "q8_0":
			qs = append(qs, uniformQuant(gguf.Q8_0))
		case "q4_0":
			qs = append(qs, uniformQuant(gguf.Q4_0))
		case "f16":
			qs = append(qs, uniformQuant(gguf.F16))
		case "f32":
			qs = append(qs, uniformQuant(gguf.F32))
		case "q4_k_m":
			qs = append(qs, q4KM)
		case "q3_k_m":
			qs = append(qs, q3KM)
		case "q2_k":
			// Every matrix Q2_K: only shapes whose widths are multiples of
			// 256 (1b) can take it.
			qs = append(qs, uniformQuant(gguf.Q2_K))
		default:
			return nil, fmt.Errorf("--quant: unknown type %q (have q8_0, q4_0, f16, f32, q4_k_m, q3_k_m, q2_k)", q)
		}
	}
	return qs, nil
}
