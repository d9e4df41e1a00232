package tokenizer

import (
	"fmt"

	"partnerapi/internal/inference/gguf"
)

// FromGGUF reads the tokenizer.ggml.* metadata of a model file. Defaults for
// absent keys follow llama.cpp: SPM adds BOS and a space prefix, ids 1/2/0
// are BOS/EOS/UNK; BPE adds BOS only for the Llama-3 pre-tokenizer.
func FromGGUF(f *gguf.File) (*Tokenizer, error) {
	v, err := VocabFromGGUF(f)
	if err != nil {
		return nil, err
	}
	return New(v)
}

// VocabFromGGUF extracts the vocabulary without building a tokenizer, for
// callers (and tests) that adjust it first.
func VocabFromGGUF(f *gguf.File) (Vocab, error) {
	model, ok := f.String("tokenizer.ggml.model")
	if !ok {
		return Vocab{}, fmt.Errorf("tokenizer: tokenizer.ggml.model is missing")
	}
	tokens, ok := f.Strings("tokenizer.ggml.tokens")
	if !ok {
		return Vocab{}, fmt.Errorf("tokenizer: tokenizer.ggml.tokens is missing or not a string array")
	}
	v := Vocab{Tokens: tokens, BOS: -1, EOS: -1, UNK: -1, EOT: -1, EOM: -1}
	v.Pre, _ = f.String("tokenizer.ggml.pre")
	v.Name, _ = f.String("general.name")
	switch model {
	case "llama":
		v.Kind = KindSPM
		v.BOS, v.EOS, v.UNK = 1, 2, 0
		v.AddBOS, v.AddSpacePrefix = true, true
		if _, present := f.Get("tokenizer.ggml.scores"); present {
			scores, ok := f.Float32s("tokenizer.ggml.scores")
			if !ok {
				// Silently merging with zero scores would give wrong ids.
				return Vocab{}, fmt.Errorf("tokenizer: tokenizer.ggml.scores is not a float32 array")
			}
			v.Scores = scores
		}
	case "gpt2":
		v.Kind = KindBPE
		merges, ok := f.Strings("tokenizer.ggml.merges")
		if !ok {
			return Vocab{}, fmt.Errorf("tokenizer: gpt2 vocabulary without tokenizer.ggml.merges")
		}
		v.Merges = merges
		v.AddBOS = isLlama3Pre(v.Pre)
	default:
		return Vocab{}, fmt.Errorf("tokenizer: unsupported tokenizer.ggml.model %q", model)
	}
	if _, present := f.Get("tokenizer.ggml.token_type"); present {
		types, ok := f.Ints("tokenizer.ggml.token_type")
		if !ok {
			return Vocab{}, fmt.Errorf("tokenizer: tokenizer.ggml.token_type is not an integer array")
		}
		v.Types = make([]TokenType, len(types))
		for i, ty := range types {
			v.Types[i] = TokenType(ty)
		}
	}
	for key, dst := range map[string]*int{
		"tokenizer.ggml.bos_token_id":     &v.BOS,
		"tokenizer.ggml.eos_token_id":     &v.EOS,
		"tokenizer.ggml.unknown_token_id": &v.UNK,
		"tokenizer.ggml.eot_token_id":     &v.EOT,
		"tokenizer.ggml.eom_token_id":     &v.EOM,
	} {
		if id, ok := f.Uint(key); ok {
			// Converters write 0xFFFFFFFF for "none"; New drops any id
			// outside the vocabulary.
			*dst = -1
			if id < uint64(len(tokens)) {
				*dst = int(id)
			}
		}
	}
	for key, dst := range map[string]*bool{
		"tokenizer.ggml.add_bos_token":    &v.AddBOS,
		"tokenizer.ggml.add_eos_token":    &v.AddEOS,
		"tokenizer.ggml.add_space_prefix": &v.AddSpacePrefix,
	} {
		if b, ok := f.Bool(key); ok {
			*dst = b
		}
	}
	return v, nil
}
