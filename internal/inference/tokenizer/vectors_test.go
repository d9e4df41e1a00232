package tokenizer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"partnerapi/internal/inference/gguf"
	"partnerapi/internal/testenv"
)

// vector is one llama.cpp tokenizer test case.
type vector struct {
	input string
	want  []int
}

// vectorSeparator ends every input in a .inp file; llama.cpp's
// convert_hf_to_gguf_update.py writes each test text followed by it, so an
// input keeps its own leading and trailing newlines.
const vectorSeparator = "\n__ggml_vocab_test__\n"

// parseVectors reads a .inp/.out pair: inputs each followed by the
// separator, and one line of space-separated expected ids per input.
func parseVectors(inp, out string) ([]vector, error) {
	if !strings.HasSuffix(inp, vectorSeparator) {
		return nil, errors.New("inp does not end with the separator")
	}
	inputs := strings.Split(strings.TrimSuffix(inp, vectorSeparator), vectorSeparator)
	lines := strings.Split(out, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) != len(inputs) {
		return nil, fmt.Errorf("%d inputs but %d output lines", len(inputs), len(lines))
	}
	vs := make([]vector, len(inputs))
	for i, in := range inputs {
		vs[i].input = in
		for _, f := range strings.Fields(lines[i]) {
			id, err := strconv.Atoi(f)
			if err != nil || id < 0 {
				return nil, fmt.Errorf("line %d: bad id %q", i+1, f)
			}
			vs[i].want = append(vs[i].want, id)
		}
	}
	return vs, nil
}

func TestParseVectors(t *testing.T) {
	tests := []struct {
		name, inp, out string
		want           []vector
		wantErr        bool
	}{
		{"two", "a\n__ggml_vocab_test__\n\nb\n\n__ggml_vocab_test__\n", " 1 2\n 3\n",
			[]vector{{"a", []int{1, 2}}, {"\nb\n", []int{3}}}, false},
		{"empty input", "\n__ggml_vocab_test__\n", "\n", []vector{{"", nil}}, false},
		{"count mismatch", "a\n__ggml_vocab_test__\n", " 1\n 2\n", nil, true},
		{"bad id", "a\n__ggml_vocab_test__\n", " x\n", nil, true},
		{"no separator", "a", " 1\n", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseVectors(tt.inp, tt.out)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if !slices.EqualFunc(got, tt.want, func(a, b vector) bool {
				return a.input == b.input && slices.Equal(a.want, b.want)
			}) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func FuzzParseVectors(f *testing.F) {
	f.Add("a\n__ggml_vocab_test__\n", " 1 2\n")
	f.Add("\n__ggml_vocab_test__\n\n__ggml_vocab_test__\n", "\n 5\n")
	f.Fuzz(func(t *testing.T, inp, out string) {
		vs, err := parseVectors(inp, out)
		if err != nil {
			return
		}
		// Writing the vectors back in the generator's format must
		// reproduce an equivalent input file.
		var b strings.Builder
		for _, v := range vs {
			b.WriteString(v.input)
			b.WriteString(vectorSeparator)
		}
		again, err := parseVectors(b.String(), out)
		if err != nil || len(again) != len(vs) {
			t.Fatalf("re-parse: %v, %d vs %d vectors", err, len(again), len(vs))
		}
	})
}

// loadVocab opens one of the shared GGUF files and builds its tokenizer.
func loadVocab(tb testing.TB, name string) *Tokenizer {
	tb.Helper()
	f, err := gguf.Open(testenv.Model(tb, name))
	if err != nil {
		tb.Fatalf("open %s: %v", name, err)
	}
	defer f.Close()
	tok, err := FromGGUF(f)
	if err != nil {
		tb.Fatalf("FromGGUF %s: %v", name, err)
	}
	return tok
}

func loadVectors(tb testing.TB, name string) []vector {
	tb.Helper()
	base := testenv.Model(tb, name)
	inp, err := os.ReadFile(base + ".inp")
	if err != nil {
		tb.Fatal(err)
	}
	out, err := os.ReadFile(base + ".out")
	if err != nil {
		tb.Fatal(err)
	}
	vs, err := parseVectors(string(inp), string(out))
	if err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	return vs
}

var vocabFiles = []string{
	"vocab/ggml-vocab-llama-spm.gguf",
	"vocab/ggml-vocab-gpt-2.gguf",
	"vocab/ggml-vocab-phi-3.gguf",
}

// TestLlamaCppVectors checks every llama.cpp test vector exactly, without
// BOS and with special-token parsing off, as test-tokenizer-0 runs them.
func TestLlamaCppVectors(t *testing.T) {
	for _, file := range vocabFiles {
		t.Run(filepath.Base(file), func(t *testing.T) {
			tok := loadVocab(t, file)
			vs := loadVectors(t, file)
			if len(vs) != 46 {
				t.Errorf("%d vectors, want 46", len(vs))
			}
			for i, v := range vs {
				t.Run(strconv.Itoa(i), func(t *testing.T) {
					got := tok.Encode(v.input, false, false)
					if !slices.Equal(got, v.want) {
						t.Errorf("input %q\nwant %v\ngot  %v", v.input, v.want, got)
					}
					// Every vector is valid UTF-8 the vocabularies can
					// spell, so decoding must give the input back.
					if back := tok.Decode(got); back != v.input {
						t.Errorf("Decode(Encode(%q)) = %q", v.input, back)
					}
					if tok.kind == KindSPM {
						whole := *tok
						whole.spmWords = false
						if uncut := whole.Encode(v.input, false, false); !slices.Equal(uncut, got) {
							t.Errorf("merging without word cuts gives %v", uncut)
						}
					}
				})
			}
		})
	}
}

func openGGUF(tb testing.TB, name string) *gguf.File {
	tb.Helper()
	f, err := gguf.Open(testenv.Model(tb, name))
	if err != nil {
		tb.Fatalf("open %s: %v", name, err)
	}
	tb.Cleanup(func() { f.Close() })
	return f
}

// TestLlama2TinyRandom checks the full Llama-2 vocabulary inside a model
// file (no add_bos/add_eos keys, so the SPM defaults apply) against the
// llama-spm vectors, which were made with the same vocabulary.
func TestLlama2TinyRandom(t *testing.T) {
	tok := loadVocab(t, "llama-2-tiny-random.gguf")
	for i, v := range loadVectors(t, "vocab/ggml-vocab-llama-spm.gguf") {
		got := tok.Encode(v.input, true, false)
		want := append([]int{1}, v.want...)
		if !slices.Equal(got, want) {
			t.Errorf("vector %d %q:\nwant %v\ngot  %v", i, v.input, want, got)
		}
	}
}
