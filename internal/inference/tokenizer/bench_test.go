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
	// The word caches make the loops above warm; these measure the merge
	// work itself, and the SPM merge over the whole text without word cuts.
	spm := loadVocab(b, "vocab/ggml-vocab-llama-spm.gguf")
	gpt := loadVocab(b, "vocab/ggml-vocab-gpt-2.gguf")
	whole := *spm
	whole.spmWords = false
	for _, c := range []struct {
		name string
		tok  *Tokenizer
	}{{"llama-spm-cold-cache", spm}, {"llama-spm-uncut", &whole}, {"gpt-2-cold-cache", gpt}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				if c.tok.spmCache != nil {
					c.tok.spmCache.reset()
				}
				if c.tok.bpe != nil {
					c.tok.bpe.cache.reset()
				}
				c.tok.Encode(text, true, true)
			}
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	tok := loadVocab(b, "vocab/ggml-vocab-llama-spm.gguf")
	ids := tok.Encode(benchText(), true, false)
	for b.Loop() {
		tok.Decode(ids)
	}
}
