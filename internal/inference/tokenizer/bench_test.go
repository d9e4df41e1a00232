package tokenizer

import (
	"strings"
	"testing"
)

// benchText is about 4 KB of mixed prose, code, numbers and non-Latin text,
// the size of a typical chat prompt.
func benchText() string {
	const para = "Once upon a time, in a small village by the sea, there lived a girl named Lily. " +
		"She loved to read books about 3,141 stars and 42 planets. func main() { fmt.Println(\"hi\") }\n" +
		"Привет, как дела? 我想在apple工作 🚀 Cửa Việt — naïve café. "
	var b strings.Builder
	for b.Len() < 4096 {
		b.WriteString(para)
	}
	return b.String()[:4096]
}

func BenchmarkEncode4KB(b *testing.B) {
	text := benchText()
	for _, file := range vocabFiles {
		tok := loadVocab(b, file)
		b.Run(file[len("vocab/ggml-vocab-"):], func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				tok.Encode(text, true, true)
			}
		})
	}
	// The BPE word cache makes the loop above warm; this measures the
	// merge work itself.
	tok := loadVocab(b, "vocab/ggml-vocab-gpt-2.gguf")
	b.Run("gpt-2-cold-cache", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			tok.bpe.cache.mu.Lock()
			tok.bpe.cache.m = nil
			tok.bpe.cache.mu.Unlock()
			tok.Encode(text, true, true)
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	tok := loadVocab(b, "vocab/ggml-vocab-llama-spm.gguf")
	ids := tok.Encode(benchText(), true, false)
	for b.Loop() {
		tok.Decode(ids)
	}
}
