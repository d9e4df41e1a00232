package tokenizer

import (
	"encoding/json"
	"os"
	"slices"
	"testing"
)

// TestPreTokenizersGolden compares the hand-written scanners with the
// reference regular expressions, as evaluated by a real backtracking regex
// engine (testdata/pretokenize_gen.py), on random strings of whitespace,
// letters, digits, marks, emoji and apostrophes.
func TestPreTokenizersGolden(t *testing.T) {
	b, err := os.ReadFile("testdata/pretokenize.json")
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		Inputs []string   `json:"inputs"`
		GPT2   [][]string `json:"gpt2"`
		Llama3 [][]string `json:"llama3"`
		Qwen2  [][]string `json:"qwen2"`
		SmolLM [][]string `json:"smollm"`
	}
	if err := json.Unmarshal(b, &golden); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		split func([]rune) []int
		want  [][]string
	}{
		{"gpt2", splitGPT2, golden.GPT2},
		{"llama3", splitLlama3, golden.Llama3},
		{"qwen2", splitQwen2, golden.Qwen2},
		{"smollm", splitDigitsThenGPT2, golden.SmolLM},
	} {
		t.Run(c.name, func(t *testing.T) {
			if len(c.want) != len(golden.Inputs) || len(c.want) < 100 {
				t.Fatalf("%d expectations for %d inputs", len(c.want), len(golden.Inputs))
			}
			for i, in := range golden.Inputs {
				runes := []rune(in)
				got := []string{}
				start := 0
				for _, end := range c.split(runes) {
					got = append(got, string(runes[start:end]))
					start = end
				}
				if !slices.Equal(got, c.want[i]) {
					t.Errorf("input %q\nwant %q\ngot  %q", in, c.want[i], got)
				}
			}
		})
	}
}
