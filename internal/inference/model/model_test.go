package model

import (
	"slices"
	"testing"

	"partnerapi/internal/inference/gguf"
	"partnerapi/internal/testenv"
)

// storiesGreedy is the reference continuation of "Once upon a time" from
// shared/models/README.md.
var (
	storiesPrompt = []int{1, 403, 407, 261, 378}
	storiesGreedy = []int{432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426, 338, 401, 396, 267, 337, 410, 408, 419, 292, 411, 322, 265, 282, 295, 433, 426, 385, 328, 432, 358, 394, 261, 370, 432, 352, 266, 268, 388, 426}
)

func openModel(t testing.TB, name string) *Model {
	t.Helper()
	f, err := gguf.Open(testenv.Model(t, name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	m, err := Load(f)
	if err != nil {
		t.Fatal(err)
	}
	m.KVCache = testKVType
	return m
}

func argmax(x []float32) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}

// greedy feeds the prompt (batched when batch is true, else token by token)
// and generates n tokens by argmax.
func greedy(t testing.TB, seq *Sequence, prompt []int, n int, batch bool) []int {
	t.Helper()
	var logits []float32
	var err error
	if batch {
		logits, err = seq.Forward(prompt)
	} else {
		for _, tok := range prompt {
			logits, err = seq.Forward([]int{tok})
			if err != nil {
				break
			}
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for range n {
		tok := argmax(logits)
		out = append(out, tok)
		if logits, err = seq.Forward([]int{tok}); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestStories260KGreedyMatchesReference(t *testing.T) {
	m := openModel(t, "stories260K.gguf")
	if m.NEmbd != 64 || m.NLayer != 5 || m.NHead != 8 || m.NHeadKV != 4 || m.HeadDim != 8 || m.NVocab != 512 || m.RopeBase != 10000 {
		t.Fatalf("config %+v", m.Config)
	}
	for _, batch := range []bool{true, false} {
		got := greedy(t, m.NewSequence(0), storiesPrompt, len(storiesGreedy), batch)
		if !slices.Equal(got, storiesGreedy) {
			t.Errorf("batched prompt %v:\n got %v\nwant %v", batch, got, storiesGreedy)
		}
	}
}

func TestSequenceCloneAndTruncate(t *testing.T) {
	m := openModel(t, "stories260K.gguf")
	seq := m.NewSequence(0)
	if _, err := seq.Forward(storiesPrompt); err != nil {
		t.Fatal(err)
	}
	clone := seq.Clone()
	a := greedy(t, seq, []int{storiesGreedy[0]}, 10, true)
	b := greedy(t, clone, []int{storiesGreedy[0]}, 10, true)
	if !slices.Equal(a, b) || !slices.Equal(a, storiesGreedy[1:11]) {
		t.Errorf("clone diverged: %v vs %v", a, b)
	}
	// Truncating back to the prompt and replaying gives the same tokens.
	seq.Truncate(len(storiesPrompt))
	if c := greedy(t, seq, []int{storiesGreedy[0]}, 10, true); !slices.Equal(c, a) {
		t.Errorf("after truncate %v, want %v", c, a)
	}
}

func TestForwardRefusesBadInput(t *testing.T) {
	m := openModel(t, "stories260K.gguf")
	seq := m.NewSequence(6)
	if _, err := seq.Forward([]int{512}); err == nil {
		t.Error("token id 512 accepted by a 512-token vocabulary")
	}
	if _, err := seq.Forward(nil); err == nil {
		t.Error("empty forward accepted")
	}
	if _, err := seq.Forward([]int{1, 2, 3, 4, 5, 6, 7}); err == nil {
		t.Error("7 tokens accepted in a 6-token context")
	}
	if seq.Pos() != 0 {
		t.Errorf("failed calls moved the position to %d", seq.Pos())
	}
}
