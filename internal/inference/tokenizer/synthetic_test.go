package tokenizer

import (
	"slices"
	"testing"
)

// spmVocab builds a small SPM vocabulary: <unk>, <s>, </s>, then the given
// tokens with their scores, then byte tokens for bytes (if any).
func spmVocab(t *testing.T, toks []string, scores []float32, bytes []byte) *Tokenizer {
	t.Helper()
	v := Vocab{Kind: KindSPM, BOS: 1, EOS: 2, UNK: 0, EOT: -1, EOM: -1, AddBOS: true}
	v.Tokens = append(v.Tokens, "<unk>", "<s>", "</s>")
	v.Scores = append(v.Scores, 0, 0, 0)
	v.Types = append(v.Types, TypeUnknown, TypeControl, TypeControl)
	for i, s := range toks {
		v.Tokens = append(v.Tokens, s)
		v.Scores = append(v.Scores, scores[i])
		v.Types = append(v.Types, TypeNormal)
	}
	for _, b := range bytes {
		v.Tokens = append(v.Tokens, "<0x"+string("0123456789ABCDEF"[b>>4])+string("0123456789ABCDEF"[b&15])+">")
		v.Scores = append(v.Scores, 0)
		v.Types = append(v.Types, TypeByte)
	}
	tok, err := New(v)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestSPMMergeOrder(t *testing.T) {
	tests := []struct {
		name   string
		toks   []string
		scores []float32
		bytes  []byte
		text   string
		want   []int
	}{
		// ids: a=3 b=4 ab=5 ba=6
		{"tie goes left", []string{"a", "b", "ab", "ba"}, []float32{0, 0, -1, -1}, nil, "aba", []int{5, 3}},
		{"higher score wins", []string{"a", "b", "ab", "ba"}, []float32{0, 0, -2, -1}, nil, "aba", []int{3, 6}},
		// é is missing: its two UTF-8 bytes become byte tokens 5 and 6.
		{"byte fallback", []string{"a", "▁"}, []float32{0, 0}, []byte{0xC3, 0xA9}, "aé", []int{3, 5, 6}},
		// Without byte tokens, each byte becomes <unk>.
		{"unknown", []string{"a"}, []float32{0}, nil, "é", []int{0, 0}},
		// Spaces are escaped; ▁a is preferred over ▁ + a.
		{"space", []string{"a", "▁", "▁a"}, []float32{0, 0, -1}, nil, "a a", []int{5, 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok := spmVocab(t, tt.toks, tt.scores, tt.bytes)
			tok.addSpacePrefix = tt.name == "space"
			got := tok.Encode(tt.text, false, false)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Encode(%q) = %v, want %v", tt.text, got, tt.want)
			}
		})
	}
}

func TestSPMAddSpecial(t *testing.T) {
	tok := spmVocab(t, []string{"a"}, []float32{0}, nil)
	if got := tok.Encode("", true, false); !slices.Equal(got, []int{1}) {
		t.Errorf("empty with BOS = %v", got)
	}
	tok.addEOS = true
	if got := tok.Encode("a", true, false); !slices.Equal(got, []int{1, 3, 2}) {
		t.Errorf("BOS/EOS = %v", got)
	}
	if got := tok.Encode("a", false, false); !slices.Equal(got, []int{3}) {
		t.Errorf("no specials = %v", got)
	}
}

func bpeVocab(t *testing.T, pre string, toks, merges []string) *Tokenizer {
	t.Helper()
	tok, err := New(Vocab{Kind: KindBPE, Pre: pre, Tokens: toks, Merges: merges, BOS: -1, EOS: -1, UNK: -1, EOT: -1, EOM: -1})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestBPEMergeRank(t *testing.T) {
	toks := []string{"a", "b", "c", "ab", "bc", "abc", "Ġ", "Ġa", "1", "2", "12"}
	tests := []struct {
		name   string
		pre    string
		merges []string
		text   string
		want   []int
	}{
		{"lowest rank first", "gpt-2", []string{"b c", "a b", "a bc"}, "abc", []int{5}},
		{"other order", "gpt-2", []string{"a b", "b c"}, "abc", []int{3, 2}},
		{"no merges", "gpt-2", nil, "abc", []int{0, 1, 2}},
		{"llama3 ignores merges for vocab words", "llama-bpe", nil, "abc", []int{5}},
		{"space maps to Ġ", "gpt-2", []string{"Ġ a"}, "a a", []int{0, 7}},
		// The pre-tokenizer decides whether digits may merge.
		{"gpt-2 keeps digit runs", "gpt-2", []string{"1 2"}, "12", []int{10}},
		{"absent pre is gpt-2", "", []string{"1 2"}, "12", []int{10}},
		{"qwen2 splits digits", "qwen2", []string{"1 2"}, "12", []int{8, 9}},
		{"smollm splits digits", "smollm", []string{"1 2"}, "12", []int{8, 9}},
		{"llama3 groups three digits", "llama-bpe", []string{"1 2"}, "12", []int{10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok := bpeVocab(t, tt.pre, toks, tt.merges)
			got := tok.Encode(tt.text, false, false)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Encode(%q) = %v, want %v", tt.text, got, tt.want)
			}
			if d := tok.Decode(got); d != tt.text {
				t.Errorf("Decode = %q", d)
			}
		})
	}
	if _, err := New(Vocab{Kind: KindBPE, Tokens: toks, Merges: []string{"abc"}}); err == nil {
		t.Error("merge without separator accepted")
	}
}

func TestByteTable(t *testing.T) {
	seen := map[rune]bool{}
	for b := 0; b < 256; b++ {
		r := byteToRune[b]
		if seen[r] || runeToByte[r] != byte(b) {
			t.Fatalf("byte %#x maps to %U, not a bijection", b, r)
		}
		seen[r] = true
	}
	if byteToRune[' '] != 'Ġ' || byteToRune['\n'] != 'Ċ' || byteToRune['A'] != 'A' {
		t.Error("GPT-2 byte table differs from the reference")
	}
}

func TestPreTokenizers(t *testing.T) {
	tests := []struct {
		name  string
		split func([]rune) []int
		text  string
		want  []string
	}{
		{"gpt2 words", splitGPT2, "Hello world", []string{"Hello", " world"}},
		{"gpt2 spaces", splitGPT2, "I'm  ok\n", []string{"I", "'m", " ", " ok", "\n"}},
		{"gpt2 digits", splitGPT2, "333 3333", []string{"333", " 3333"}},
		{"gpt2 case-sensitive contraction", splitGPT2, "'S", []string{"'", "S"}},
		{"gpt2 trailing spaces", splitGPT2, "a  ", []string{"a", "  "}},
		{"llama3 digits", splitLlama3, "333 3333", []string{"333", " ", "333", "3"}},
		{"llama3 mixed", splitLlama3, "Hello, WORLD'S\n\n end", []string{"Hello", ",", " WORLD", "'S", "\n\n", " end"}},
		{"llama3 punct newline", splitLlama3, "a!!\n\nb", []string{"a", "!!\n\n", "b"}},
		{"llama3 tab letter", splitLlama3, "\tx  y", []string{"\tx", " ", " y"}},
		{"qwen2 digits", splitQwen2, "12 345", []string{"1", "2", " ", "3", "4", "5"}},
		{"smollm digits", splitDigitsThenGPT2, "a1 22", []string{"a", "1", " ", "2", "2"}},
		{"smollm region end", splitDigitsThenGPT2, "x  1", []string{"x", "  ", "1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runes := []rune(tt.text)
			var got []string
			start := 0
			for _, end := range tt.split(runes) {
				got = append(got, string(runes[start:end]))
				start = end
			}
			if start != len(runes) {
				t.Fatalf("words cover %d of %d runes", start, len(runes))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("split(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

// TestPreTokenizerNames checks which pattern each tokenizer.ggml.pre name
// selects, as llama.cpp's llama_vocab::load maps them: "smaug-bpe" and
// "dbrx" split as Llama-3 does without its merge skipping, and unknown
// names fall back to GPT-2's pattern and are reported.
func TestPreTokenizerNames(t *testing.T) {
	const text = "333 3333"
	gpt2 := []string{"333", " 3333"}
	llama3 := []string{"333", " ", "333", "3"}
	qwen2 := []string{"3", "3", "3", " ", "3", "3", "3", "3"}
	tests := []struct {
		pre          string
		want         []string
		ignoreMerges bool
		unknown      bool // reported by UnknownPreTokenizer
	}{
		{"", gpt2, false, false},
		{"gpt-2", gpt2, false, false},
		{"olmo", gpt2, false, false},
		{"tekken", gpt2, false, true},
		{"some-future-name", gpt2, false, true},
		{"llama-bpe", llama3, true, false},
		{"smaug-bpe", llama3, false, false},
		{"dbrx", llama3, false, false},
		{"qwen2", qwen2, false, false},
		{"deepseek-r1-qwen", qwen2, false, false},
		{"stablelm2", qwen2, false, false},
		{"smollm", []string{"3", "3", "3", " ", "3", "3", "3", "3"}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.pre, func(t *testing.T) {
			tok, err := New(Vocab{Kind: KindBPE, Pre: tt.pre, Tokens: []string{"3"}, BOS: -1, EOS: -1, UNK: -1, EOT: -1, EOM: -1})
			if err != nil {
				t.Fatal(err)
			}
			m := tok.bpe
			if pre, unknown := tok.UnknownPreTokenizer(); unknown != tt.unknown || (unknown && pre != tt.pre) {
				t.Errorf("UnknownPreTokenizer = %q, %v; want %v", pre, unknown, tt.unknown)
			}
			runes := []rune(text)
			var got []string
			start := 0
			for _, end := range m.split(runes) {
				got = append(got, string(runes[start:end]))
				start = end
			}
			if !slices.Equal(got, tt.want) || m.ignoreMerges != tt.ignoreMerges {
				t.Errorf("split %q, ignore merges %v; want %q, %v", got, m.ignoreMerges, tt.want, tt.ignoreMerges)
			}
		})
	}
}

func TestNewRejectsBadVocab(t *testing.T) {
	bad := []Vocab{
		{Kind: KindSPM},
		{Kind: KindSPM, Tokens: []string{"a"}, Scores: []float32{1, 2}},
		{Kind: KindSPM, Tokens: []string{"a"}, Types: []TokenType{1, 1}},
		{Kind: Kind(7), Tokens: []string{"a"}},
	}
	for i, v := range bad {
		if _, err := New(v); err == nil {
			t.Errorf("vocab %d accepted", i)
		}
	}
}
