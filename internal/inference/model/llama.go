package model

func init() {
	// Llama (and llama2.c exports such as stories260K): normal RoPE, no
	// biases, output optionally tied to the embeddings.
	register(Architecture{
		Name:            "llama",
		Rope:            RopeNormal,
		DefaultRopeBase: 10000,
		DefaultNormEps:  1e-5,
		OptionalQKVBias: true,
		MayTieOutput:    true,
	})
}
