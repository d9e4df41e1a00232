// Package model loads llama-family transformer weights from a GGUF file and
// runs the forward pass with a KV cache per sequence. Weights stay in the
// file's memory mapping; matrix products go through package kernels.
package model

import (
	"fmt"
	"sort"
)

// RopeMode selects which dimensions RoPE rotates together.
type RopeMode int

const (
	// RopeNormal rotates adjacent pairs (x[2i], x[2i+1]) (llama, mistral).
	RopeNormal RopeMode = iota
	// RopeNeoX rotates (x[i], x[i+n_rot/2]) (qwen2, phi3, gemma, gpt-neox).
	RopeNeoX
)

// Architecture describes what distinguishes one llama-like architecture from
// another. Adding an architecture is one file that calls register.
type Architecture struct {
	Name            string
	Rope            RopeMode
	QKVBias         bool    // attn_q/k/v.bias tensors are required
	DefaultRopeBase float64 // when {arch}.rope.freq_base is absent
	DefaultNormEps  float64 // when {arch}.attention.layer_norm_rms_epsilon is absent
	OptionalQKVBias bool    // biases are used when present
	MayTieOutput    bool    // output.weight may be absent (tied to token_embd)
}

var architectures = map[string]Architecture{}

func register(a Architecture) {
	if _, dup := architectures[a.Name]; dup {
		panic("model: architecture registered twice: " + a.Name)
	}
	architectures[a.Name] = a
}

// Architectures lists the supported general.architecture values.
func Architectures() []string {
	names := make([]string, 0, len(architectures))
	for n := range architectures {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func lookupArchitecture(name string) (Architecture, error) {
	a, ok := architectures[name]
	if !ok {
		return Architecture{}, fmt.Errorf("model: unsupported architecture %q (supported: %v)", name, Architectures())
	}
	return a, nil
}
