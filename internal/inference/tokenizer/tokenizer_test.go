package tokenizer

import (
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestStories260K(t *testing.T) {
	tok := loadVocab(t, "stories260K.gguf")
	tests := []struct {
		text string
		want []int
	}{
		{"Once upon a time", []int{1, 403, 407, 261, 378}},
		{"Lily and Tom went to the", []int{1, 317, 269, 274, 287, 263, 377, 267, 265}},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			got := tok.Encode(tt.text, true, false)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Encode(%q) = %v, want %v", tt.text, got, tt.want)
			}
			if back := tok.Decode(got); back != tt.text {
				t.Errorf("Decode = %q", back)
			}
		})
	}
	if tok.VocabSize() != 512 || tok.BOS() != 1 || tok.EOS() != 2 || !tok.IsEOG(2) || tok.IsEOG(1) {
		t.Errorf("size %d bos %d eos %d", tok.VocabSize(), tok.BOS(), tok.EOS())
	}
}

// TestPhi3ChatPrompt checks special-token parsing against llama.cpp's ids
// for a Phi-3 turn: whitespace right of the chat markers is dropped (the
// name-keyed RSTRIP rule) and the next text run gets a fresh space prefix.
func TestPhi3ChatPrompt(t *testing.T) {
	const prompt = "<|user|>\nSYS\nHI<|end|>\n<|assistant|>\n"
	tok := loadVocab(t, "vocab/ggml-vocab-phi-3.gguf")
	got := tok.Encode(prompt, true, true)
	want := []int{1, 32010, 317, 21554, 13, 17628, 32007, 32001}
	if !slices.Equal(got, want) {
		t.Errorf("phi-3 prompt = %v, want %v", got, want)
	}
	if d := tok.Decode(got); d != "SYS\nHI" {
		t.Errorf("Decode skips control tokens: got %q", d)
	}

	// Without special parsing the markers are ordinary text.
	plain := tok.Encode(prompt, false, false)
	if slices.Contains(plain, 32010) || slices.Contains(plain, 32007) {
		t.Errorf("parseSpecial=false produced special ids: %v", plain)
	}
	if d := tok.Decode(plain); d != prompt {
		t.Errorf("plain round trip = %q", d)
	}

	// The same vocabulary under another name keeps the whitespace.
	f := openGGUF(t, "vocab/ggml-vocab-phi-3.gguf")
	v, err := VocabFromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	v.Name = "other"
	other, err := New(v)
	if err != nil {
		t.Fatal(err)
	}
	got = other.Encode("<|user|>\nHI", false, true)
	if !slices.Equal(got, []int{32010, 29871, 13, 17628}) {
		t.Errorf("non-phi name: got %v, want whitespace kept", got)
	}
}

// TestEncodeInParts backs the package documentation: encoding a chat prompt
// piecewise, user text without special parsing, gives the whole-prompt ids.
func TestEncodeInParts(t *testing.T) {
	tok := loadVocab(t, "vocab/ggml-vocab-phi-3.gguf")
	head, user, tail := "<|user|>\n", "Hello there, friend", "<|end|>\n<|assistant|>\n"
	whole := tok.Encode(head+user+tail, true, true)
	parts := tok.Encode(head, true, true)
	parts = append(parts, tok.Encode(user, false, false)...)
	parts = append(parts, tok.Encode(tail, false, true)...)
	if !slices.Equal(parts, whole) {
		t.Errorf("parts %v != whole %v", parts, whole)
	}
	// A marker inside user text stays text when not parsed.
	if ids := tok.Encode("a <|end|> b", false, false); slices.Contains(ids, 32007) {
		t.Errorf("user text produced <|end|>: %v", ids)
	}
}

func TestSpecialTokens(t *testing.T) {
	phi := loadVocab(t, "vocab/ggml-vocab-phi-3.gguf")
	gpt := loadVocab(t, "vocab/ggml-vocab-gpt-2.gguf")
	for _, tt := range []struct {
		name string
		tok  *Tokenizer
		text string
		id   int
		eog  bool
	}{
		{"phi user", phi, "<|user|>", 32010, false},
		{"phi end", phi, "<|end|>", 32007, true},
		{"phi endoftext", phi, "<|endoftext|>", 32000, true},
		{"phi bos", phi, "<s>", 1, false},
		{"gpt endoftext", gpt, "<|endoftext|>", 50256, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			id, ok := tt.tok.Special(tt.text)
			if !ok || id != tt.id {
				t.Fatalf("Special(%q) = %d, %v; want %d", tt.text, id, ok, tt.id)
			}
			if tt.tok.TokenText(id) != tt.text {
				t.Errorf("TokenText(%d) = %q", id, tt.tok.TokenText(id))
			}
			if tt.tok.IsEOG(id) != tt.eog {
				t.Errorf("IsEOG(%d) = %v", id, !tt.eog)
			}
			if len(tt.tok.Piece(id)) != 0 && tt.tok.TokenType(id) == TypeControl {
				t.Errorf("control token %d has a piece %q", id, tt.tok.Piece(id))
			}
		})
	}
	if _, ok := phi.Special("hello"); ok {
		t.Error("Special found a normal word")
	}
	// GPT-2: the end-of-text marker is recognised only with parseSpecial,
	// and neither BOS nor EOS is added by default.
	if got := gpt.Encode("Hi<|endoftext|>", true, true); !slices.Equal(got, []int{17250, 50256}) {
		t.Errorf("gpt-2 special parse = %v", got)
	}
	if got := gpt.Encode("Hi<|endoftext|>", true, false); slices.Contains(got, 50256) {
		t.Errorf("gpt-2 without parseSpecial = %v", got)
	}
	if phi.BOS() != 1 || phi.EOS() != 32000 || gpt.BOS() != 50256 || gpt.AddsBOS() || !phi.AddsBOS() {
		t.Error("special ids or add_bos flags wrong")
	}
}

func TestDecodeSkipsControl(t *testing.T) {
	tok := loadVocab(t, "vocab/ggml-vocab-llama-spm.gguf")
	if got := tok.Decode([]int{1, 15043, 3186, 2}); got != "Hello world" {
		t.Errorf("Decode = %q", got)
	}
	// A leading space the prefix did not add survives.
	if got := tok.Decode([]int{1, 29871, 15043}); got != " Hello" {
		t.Errorf("Decode = %q", got)
	}
	if got := string(tok.Piece(15043)); got != " Hello" {
		t.Errorf("Piece = %q", got)
	}
	if got := tok.Piece(13); !slices.Equal(got, []byte{'\n'}) {
		t.Errorf("byte piece = %q", got)
	}
	if tok.Piece(-1) != nil || tok.Piece(tok.VocabSize()) != nil || tok.TokenText(-5) != "" {
		t.Error("out-of-range ids must give empty results")
	}
}

func TestStreamDecoder(t *testing.T) {
	tok := loadVocab(t, "vocab/ggml-vocab-llama-spm.gguf")
	// "🦙" is spelled by four byte tokens; nothing may come out before the
	// last one.
	d := tok.NewStreamDecoder()
	var outs []string
	for _, id := range []int{29871, 243, 162, 169, 156, 29871, 243, 162} {
		outs = append(outs, d.Add(id))
	}
	outs = append(outs, d.Flush())
	want := []string{"", "", "", "", "🦙", " ", "", "", "\uFFFD"}
	if !slices.Equal(outs, want) {
		t.Errorf("stream = %q, want %q", outs, want)
	}
	if d.Flush() != "" {
		t.Error("second Flush must be empty")
	}

	c := tok.NewContinuationDecoder()
	if got := c.Add(15043); got != " Hello" {
		t.Errorf("continuation keeps the space: %q", got)
	}

	// For every vector, streaming must equal Decode.
	for _, file := range vocabFiles {
		tok := loadVocab(t, file)
		for _, v := range loadVectors(t, file) {
			ids := tok.Encode(v.input, true, false)
			d := tok.NewStreamDecoder()
			var b strings.Builder
			for _, id := range ids {
				s := d.Add(id)
				if strings.ContainsRune(s, '\uFFFD') {
					t.Errorf("%s %q: broken rune in %q", file, v.input, s)
				}
				b.WriteString(s)
			}
			b.WriteString(d.Flush())
			if b.String() != tok.Decode(ids) {
				t.Errorf("%s: stream %q != Decode %q", file, b.String(), tok.Decode(ids))
			}
		}
	}
}

func TestCompletePrefix(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"abc", 3},
		{"a\xF0\x9F", 1},
		{"a\xF0\x9F\xA6", 1},
		{"a\xF0\x9F\xA6\x99", 5},
		{"\xE2\x82", 0},
		{"a\xFF", 2},     // invalid, never completes
		{"a\xE0\x80", 3}, // overlong prefix is invalid already
		{"\x80\x80\x80", 3},
	}
	for _, tt := range tests {
		if got := completePrefix([]byte(tt.in)); got != tt.want {
			t.Errorf("completePrefix(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestConcurrentEncode(t *testing.T) {
	tok := loadVocab(t, "vocab/ggml-vocab-gpt-2.gguf")
	want := tok.Encode("Hello, y'all! How are you?", false, false)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 50 {
				if got := tok.Encode("Hello, y'all! How are you?", false, false); !slices.Equal(got, want) {
					t.Errorf("concurrent encode = %v", got)
					return
				}
			}
		})
	}
	wg.Wait()
}
