package model

import (
	"math"
	"testing"
)

// ForwardEach gives, for every token, the logits a token-by-token Forward
// gives at that position (within the tolerance of a product over many rows
// against one), and leaves the sequence where Forward would.
func TestForwardEachMatchesForward(t *testing.T) {
	m := openModel(t, "stories260K.gguf")
	tokens := []int{1, 403, 407, 261, 378, 290, 261, 411, 266, 303}
	// Longer than a prefill chunk, so ForwardEach runs two.
	for len(tokens) < prefillChunk+9 {
		tokens = append(tokens, tokens[1:10]...)
	}
	one := m.NewSequence(len(tokens))
	defer one.Release()
	want := make([][]float32, len(tokens))
	for i, tok := range tokens {
		logits, err := one.Forward([]int{tok})
		if err != nil {
			t.Fatal(err)
		}
		want[i] = append([]float32(nil), logits...)
	}
	each := m.NewSequence(len(tokens))
	defer each.Release()
	seen := 0
	err := each.ForwardEach(tokens, func(i int, logits []float32) {
		if i != seen {
			t.Fatalf("position %d after %d", i, seen)
		}
		seen++
		for j, v := range logits {
			if d := math.Abs(float64(v - want[i][j])); d > 1e-3*(1+math.Abs(float64(want[i][j]))) {
				t.Fatalf("position %d logit %d: %g, token by token %g", i, j, v, want[i][j])
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen != len(tokens) || each.Pos() != len(tokens) {
		t.Fatalf("%d positions seen, sequence at %d", seen, each.Pos())
	}
	if err := each.ForwardEach([]int{1}, func(int, []float32) {}); err == nil {
		t.Fatal("a full sequence took another token")
	}
}
