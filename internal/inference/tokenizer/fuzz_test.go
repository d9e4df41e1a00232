package tokenizer

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

var (
	fuzzOnce         sync.Once
	fuzzSPM, fuzzBPE *Tokenizer
)

// FuzzEncodeDecode checks that no input panics either tokenizer and that
// decoding inverts encoding wherever the tokenizer is lossless: valid UTF-8
// for both, and for SPM only if the text does not contain U+2581 itself and
// merges into no control/unknown token. (Invalid UTF-8 is lossy in SPM as in
// llama.cpp: a stray lead byte swallows the following bytes into one
// symbol, which byte fallback then spells without unescaping U+2581.)
//
// The text is at most 128 bytes. Encoding's coverage grows with the text
// (words, merges, the merge queue), so every longer text was new coverage
// that the minimizer shortened substring by substring, each an encoding
// with both vocabularies, while the only worker fuzzed nothing: a 30 s
// run stood still from its sixth second. 128 bytes hold several words of
// any script, each merge order and the special tokens.
func FuzzEncodeDecode(f *testing.F) {
	for _, s := range []string{"", " ", "Hello world", "\n\n\t x", "🦙 Cửa Việt", "\xff\xfe", "<s></s>", "<|endoftext|>", "3333333", "'S 're"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	fuzzOnce.Do(func() {
		fuzzSPM = loadVocab(f, "vocab/ggml-vocab-llama-spm.gguf")
		fuzzBPE = loadVocab(f, "vocab/ggml-vocab-gpt-2.gguf")
	})
	f.Fuzz(func(t *testing.T, s string, parseSpecial bool) {
		if len(s) > 128 {
			return
		}
		for _, tok := range []*Tokenizer{fuzzSPM, fuzzBPE} {
			ids := tok.Encode(s, true, parseSpecial)
			if tok.kind == KindSPM {
				// Cutting text into words must never change the result.
				whole := *tok
				whole.spmWords = false
				if uncut := whole.Encode(s, true, parseSpecial); !slices.Equal(uncut, ids) {
					t.Fatalf("%q: word cuts give %v, whole text %v", s, ids, uncut)
				}
			}
			for _, id := range ids {
				if id < 0 || id >= tok.VocabSize() {
					t.Fatalf("id %d out of range for %q", id, s)
				}
			}
			// Streaming must never fail either, and agrees with Decode
			// on valid output.
			d := tok.NewStreamDecoder()
			var b strings.Builder
			for _, id := range ids {
				b.WriteString(d.Add(id))
			}
			b.WriteString(d.Flush())
			dec := tok.Decode(ids)
			if utf8.ValidString(dec) && b.String() != dec {
				t.Fatalf("stream %q != Decode %q", b.String(), dec)
			}
			if parseSpecial || !lossless(tok, s, ids) {
				continue
			}
			if dec != s {
				t.Fatalf("kind %d: Decode(Encode(%q)) = %q (ids %v)", tok.kind, s, dec, ids)
			}
		}
	})
}

func lossless(tok *Tokenizer, s string, ids []int) bool {
	if !utf8.ValidString(s) {
		return false
	}
	if tok.kind == KindBPE {
		return true
	}
	if strings.Contains(s, "\u2581") {
		return false
	}
	for _, id := range ids[1:] { // ids[0] is BOS
		if ty := tok.TokenType(id); ty != TypeNormal && ty != TypeByte {
			return false
		}
	}
	return true
}
