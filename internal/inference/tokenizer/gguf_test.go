package tokenizer

import (
	"bytes"
	"slices"
	"testing"

	"partnerapi/internal/inference/gguf"
)

// parseKVs writes metadata into an in-memory GGUF and parses it back.
func parseKVs(t *testing.T, kvs []gguf.KV) *gguf.File {
	t.Helper()
	var buf bytes.Buffer
	if err := gguf.Write(&buf, kvs, nil); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestFromGGUFMetadata(t *testing.T) {
	spmTokens := gguf.StringsValue([]string{"<unk>", "<s>", "</s>", "▁a", "a", "▁"})
	tests := []struct {
		name    string
		kvs     []gguf.KV
		wantErr bool
		check   func(t *testing.T, tok *Tokenizer)
	}{
		{name: "missing model", kvs: []gguf.KV{{Key: "tokenizer.ggml.tokens", Value: spmTokens}}, wantErr: true},
		{name: "missing tokens", kvs: []gguf.KV{{Key: "tokenizer.ggml.model", Value: gguf.StringValue("llama")}}, wantErr: true},
		{name: "unsupported model", kvs: []gguf.KV{
			{Key: "tokenizer.ggml.model", Value: gguf.StringValue("t5")},
			{Key: "tokenizer.ggml.tokens", Value: spmTokens}}, wantErr: true},
		{name: "gpt2 without merges", kvs: []gguf.KV{
			{Key: "tokenizer.ggml.model", Value: gguf.StringValue("gpt2")},
			{Key: "tokenizer.ggml.tokens", Value: spmTokens}}, wantErr: true},
		{name: "scores length mismatch", kvs: []gguf.KV{
			{Key: "tokenizer.ggml.model", Value: gguf.StringValue("llama")},
			{Key: "tokenizer.ggml.tokens", Value: spmTokens},
			{Key: "tokenizer.ggml.scores", Value: gguf.Float32sValue([]float32{1})}}, wantErr: true},
		{name: "scores of the wrong type", kvs: []gguf.KV{
			{Key: "tokenizer.ggml.model", Value: gguf.StringValue("llama")},
			{Key: "tokenizer.ggml.tokens", Value: spmTokens},
			{Key: "tokenizer.ggml.scores", Value: gguf.Int32sValue([]int32{0, 0, 0, 0, 0, 0})}}, wantErr: true},
		{name: "token types of the wrong type", kvs: []gguf.KV{
			{Key: "tokenizer.ggml.model", Value: gguf.StringValue("llama")},
			{Key: "tokenizer.ggml.tokens", Value: spmTokens},
			{Key: "tokenizer.ggml.token_type", Value: gguf.StringsValue([]string{"a", "b", "c", "d", "e", "f"})}}, wantErr: true},
		{name: "spm defaults", kvs: []gguf.KV{
			{Key: "tokenizer.ggml.model", Value: gguf.StringValue("llama")},
			{Key: "tokenizer.ggml.tokens", Value: spmTokens}},
			check: func(t *testing.T, tok *Tokenizer) {
				if tok.BOS() != 1 || tok.EOS() != 2 || !tok.AddsBOS() {
					t.Errorf("bos %d eos %d", tok.BOS(), tok.EOS())
				}
				if got := tok.Encode("a", true, false); !slices.Equal(got, []int{1, 3}) {
					t.Errorf("Encode = %v, want BOS and ▁a", got)
				}
			}},
		{name: "spm flags and none ids", kvs: []gguf.KV{
			{Key: "tokenizer.ggml.model", Value: gguf.StringValue("llama")},
			{Key: "tokenizer.ggml.tokens", Value: spmTokens},
			{Key: "tokenizer.ggml.add_space_prefix", Value: gguf.BoolValue(false)},
			{Key: "tokenizer.ggml.add_bos_token", Value: gguf.BoolValue(false)},
			{Key: "tokenizer.ggml.add_eos_token", Value: gguf.BoolValue(true)},
			{Key: "tokenizer.ggml.eos_token_id", Value: gguf.Uint32Value(0xFFFFFFFF)},
			{Key: "tokenizer.ggml.token_type", Value: gguf.Int32sValue([]int32{2, 3, 3, 1, 1, 1})}},
			check: func(t *testing.T, tok *Tokenizer) {
				if tok.EOS() != -1 {
					t.Errorf("eos = %d, want -1", tok.EOS())
				}
				// No prefix, no BOS, and no EOS since it is undefined.
				if got := tok.Encode("a", true, false); !slices.Equal(got, []int{4}) {
					t.Errorf("Encode = %v", got)
				}
			}},
		{name: "gpt2 llama-bpe adds bos", kvs: []gguf.KV{
			{Key: "tokenizer.ggml.model", Value: gguf.StringValue("gpt2")},
			{Key: "tokenizer.ggml.pre", Value: gguf.StringValue("llama-bpe")},
			{Key: "tokenizer.ggml.tokens", Value: gguf.StringsValue([]string{"a", "b", "ab", "<|begin_of_text|>", "<|eot_id|>"})},
			{Key: "tokenizer.ggml.token_type", Value: gguf.Int32sValue([]int32{1, 1, 1, 3, 1})},
			{Key: "tokenizer.ggml.merges", Value: gguf.StringsValue([]string{"a b"})},
			{Key: "tokenizer.ggml.bos_token_id", Value: gguf.Uint32Value(3)}},
			check: func(t *testing.T, tok *Tokenizer) {
				if got := tok.Encode("ab<|eot_id|>", true, true); !slices.Equal(got, []int{3, 2, 4}) {
					t.Errorf("Encode = %v", got)
				}
				// <|eot_id|> ends generation and is forced to control type.
				if !tok.IsEOG(4) || tok.TokenType(4) != TypeControl || tok.Decode([]int{3, 2, 4}) != "ab" {
					t.Errorf("eot handling: eog %v type %d decode %q", tok.IsEOG(4), tok.TokenType(4), tok.Decode([]int{3, 2, 4}))
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok, err := FromGGUF(parseKVs(t, tt.kvs))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if tt.check != nil {
				tt.check(t, tok)
			}
		})
	}
}
