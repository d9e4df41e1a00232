package model

func init() {
	// Qwen2/Qwen2.5: q/k/v biases, NeoX RoPE with base 1e6, eps 1e-6; the
	// small models tie the output projection to the embeddings.
	register(Architecture{
		Name:            "qwen2",
		Rope:            RopeNeoX,
		QKVBias:         true,
		DefaultRopeBase: 1e6,
		DefaultNormEps:  1e-6,
		MayTieOutput:    true,
	})
}
