package model

import (
	"slices"
	"testing"

	"partnerapi/internal/inference/gguf"
	"partnerapi/internal/inference/kernels"
)

// openSynthetic loads a random-weight model of the given shape.
func openSynthetic(t testing.TB, cfg synthConfig, seed uint64) *Model {
	t.Helper()
	f, err := gguf.Open(writeSynthetic(t, cfg, seed))
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

// TestBatchStepMatchesForward checks that stepping sequences of different
// lengths together gives bit-identical logits to stepping each alone, and
// that a sequence can leave and join between steps. The synthetic models
// have the attention shapes of SmolLM2-135M (head size 64, nine query heads
// over three KV heads) and Qwen2.5-0.5B (fourteen over two), which run the
// grouped assembly kernels in passes of three and four heads; a lone 0.5B
// sequence splits its KV groups across the pool where a batch does not.
func TestBatchStepMatchesForward(t *testing.T) {
	gqa3 := openSynthetic(t, synthConfig{arch: "llama", embd: 576, layers: 2, heads: 9, kvHeads: 3, ff: 128, vocab: 64, ctx: 64, rot: 64, weightType: gguf.F32}, 3)
	gqa7 := openSynthetic(t, synthConfig{arch: "qwen2", embd: 896, layers: 2, heads: 14, kvHeads: 2, ff: 128, vocab: 64, ctx: 64, rot: 64, bias: true, weightType: gguf.F32}, 4)
	// Quantised weights take the Q8_0 and Q4_0 kernels (packed 16 rows at a
	// time in the AVX-512 family, 8 in the AVX2 one), whose batches must be
	// invariant too.
	q8 := openSynthetic(t, synthConfig{arch: "llama", embd: 576, layers: 2, heads: 9, kvHeads: 3, ff: 128, vocab: 64, ctx: 64, rot: 64, weightType: gguf.Q8_0}, 5)
	q4 := openSynthetic(t, synthConfig{arch: "qwen2", embd: 896, layers: 2, heads: 14, kvHeads: 2, ff: 128, vocab: 64, ctx: 64, rot: 64, bias: true, weightType: gguf.Q4_0}, 6)
	if kernels.ISA() != "purego" && !(q8.Layers[0].Wq.Packed() && q4.Layers[1].Wdown.Packed() && q8.Output.Packed()) {
		t.Fatalf("the %s family did not pack the quantised weights at load", kernels.ISA())
	}
	gqaPrompts := [][]int{{1, 5, 9, 13, 17}, {2, 3, 4}, {1, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57}}
	for _, tc := range []struct {
		name    string
		m       *Model
		prompts [][]int
	}{
		{"stories260K", openModel(t, "stories260K.gguf"), [][]int{storiesPrompt, storiesPrompt[:3], {1, 400, 401, 402, 403, 404, 405, 406, 407}}},
		{"GQA 9 over 3, head size 64", gqa3, gqaPrompts},
		{"GQA 14 over 2, head size 64", gqa7, gqaPrompts},
		{"Q8_0, GQA 9 over 3", q8, gqaPrompts},
		{"Q4_0, GQA 14 over 2", q4, gqaPrompts},
	} {
		t.Run(tc.name, func(t *testing.T) { testBatchStepMatchesForward(t, tc.m, tc.prompts) })
	}
}

func testBatchStepMatchesForward(t *testing.T, m *Model, prompts [][]int) {
	const steps = 12
	// Alone: greedy continuation and logits per step.
	alone := make([][][]float32, len(prompts))
	for i, p := range prompts {
		seq := m.NewSequence(0)
		logits, err := seq.Forward(p)
		if err != nil {
			t.Fatal(err)
		}
		for range steps {
			tok := argmax(logits)
			if logits, err = seq.Forward([]int{tok}); err != nil {
				t.Fatal(err)
			}
			alone[i] = append(alone[i], slices.Clone(logits))
		}
	}
	// Batched: the third sequence joins after 4 steps and the second leaves
	// after 8.
	b := m.NewBatch()
	seqs := make([]*Sequence, len(prompts))
	next := make([]int, len(prompts))
	done := make([]int, len(prompts))
	for i, p := range prompts {
		seqs[i] = m.NewSequence(0)
		logits, err := seqs[i].Forward(p)
		if err != nil {
			t.Fatal(err)
		}
		next[i] = argmax(logits)
	}
	for step := range steps + 4 {
		var in []*Sequence
		var toks, idx []int
		for i := range prompts {
			joined := i != 2 || step >= 4
			left := i == 1 && step >= 8
			if joined && !left && done[i] < steps {
				in, toks, idx = append(in, seqs[i]), append(toks, next[i]), append(idx, i)
			}
		}
		if len(in) == 0 {
			break
		}
		out, err := b.Step(in, toks)
		if err != nil {
			t.Fatal(err)
		}
		for j, i := range idx {
			if !slices.Equal(out[j], alone[i][done[i]]) {
				t.Fatalf("step %d: sequence %d logits differ from the unbatched run", step, i)
			}
			done[i]++
			next[i] = argmax(out[j])
		}
	}
	if done[0] != steps || done[1] != 8 || done[2] != steps {
		t.Errorf("steps done %v", done)
	}
}

func TestBatchStepRefusesBadInput(t *testing.T) {
	m := openModel(t, "stories260K.gguf")
	b := m.NewBatch()
	full := m.NewSequence(1)
	if _, err := full.Forward([]int{1}); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		seqs []*Sequence
		toks []int
	}{
		"empty":        {nil, nil},
		"count":        {[]*Sequence{m.NewSequence(0)}, []int{1, 2}},
		"token range":  {[]*Sequence{m.NewSequence(0)}, []int{512}},
		"context full": {[]*Sequence{full}, []int{1}},
	} {
		if _, err := b.Step(tc.seqs, tc.toks); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestSequenceReleaseAndClonePrefix(t *testing.T) {
	m := openModel(t, "stories260K.gguf")
	seq := m.NewSequence(0)
	if _, err := seq.Forward(storiesPrompt); err != nil {
		t.Fatal(err)
	}
	// Keys and values of every layer as 2-byte halves: the five prompt
	// tokens in the smallest cache, the clone's three in one key block.
	perPosition := int64(m.KVDim() * m.NLayer * 2 * 2)
	if got, want := seq.KVBytes(), minKVPositions*perPosition; got != want {
		t.Errorf("KV bytes %d, want %d", got, want)
	}
	c := seq.ClonePrefix(3)
	if c.Pos() != 3 || c.KVBytes() != int64(kernels.KVCapacity(3))*perPosition {
		t.Fatalf("clone pos %d, %d KV bytes", c.Pos(), c.KVBytes())
	}
	// The clone continued with the rest of the prompt behaves like the original.
	want := greedy(t, seq, []int{storiesGreedy[0]}, 5, true)
	if got := greedy(t, c, append(slices.Clone(storiesPrompt[3:]), storiesGreedy[0]), 5, true); !slices.Equal(got, want) {
		t.Errorf("prefix clone continued %v, want %v", got, want)
	}
	seq.Release()
	if seq.KVBytes() != 0 || seq.Pos() != 0 {
		t.Errorf("after release: %d bytes, pos %d", seq.KVBytes(), seq.Pos())
	}
}

// TestClonePrefixInTakesItsOwnContext copies a prefix out of sequences of
// a small and of a large context into the other size: each copy holds the
// context it was made for, not its source's, and continues as a sequence
// of that context would from scratch.
func TestClonePrefixInTakesItsOwnContext(t *testing.T) {
	m := openModel(t, "stories260K.gguf")
	for _, c := range []struct{ from, to, wantCtx, wantPos int }{
		{16, 0, m.NCtx, 4},    // a small window's prefix in the model's window
		{0, 64, 64, 4},        // and the other way round
		{0, 3, 3, 3},          // a window smaller than the prefix keeps what fits
		{16, 4096, m.NCtx, 4}, // never beyond the trained context
	} {
		src := m.NewSequence(c.from)
		if _, err := src.Forward(storiesPrompt); err != nil {
			t.Fatal(err)
		}
		cp := src.ClonePrefixIn(4, c.to)
		if cp.MaxContext() != c.wantCtx || cp.Pos() != c.wantPos {
			t.Errorf("from %d to %d: context %d, pos %d; want %d, %d", c.from, c.to, cp.MaxContext(), cp.Pos(), c.wantCtx, c.wantPos)
			continue
		}
		if c.wantPos < 4 {
			continue
		}
		// Twenty tokens more than the small window holds: the copy runs
		// in its own.
		want := greedy(t, m.NewSequence(c.to), append(slices.Clone(storiesPrompt), storiesGreedy[0]), 20, true)
		if got := greedy(t, cp, []int{storiesPrompt[4], storiesGreedy[0]}, 20, true); !slices.Equal(got, want) {
			t.Errorf("from %d to %d: the copy continued %v, want %v", c.from, c.to, got, want)
		}
	}
}

// TestStepChunksMixesPrefillAndDecode steps a decoding sequence together
// with another sequence's prompt chunks (as the scheduler does while a
// request joins) and checks that both get bit-identical logits to running
// alone.
func TestStepChunksMixesPrefillAndDecode(t *testing.T) {
	m := openModel(t, "stories260K.gguf")
	long := []int{1, 317, 269, 274, 287, 263, 377, 267, 265, 432, 383, 286, 261, 376, 298}
	// Alone: the prompt's logits, and the decoding sequence's next logits.
	alonePrompt, err := m.NewSequence(0).Forward(long)
	if err != nil {
		t.Fatal(err)
	}
	alonePrompt = slices.Clone(alonePrompt)
	dec := m.NewSequence(0)
	logits, err := dec.Forward(storiesPrompt)
	if err != nil {
		t.Fatal(err)
	}
	var aloneDecode [][]float32
	var decToks []int
	for range 3 {
		tok := argmax(logits)
		decToks = append(decToks, tok)
		if logits, err = dec.Forward([]int{tok}); err != nil {
			t.Fatal(err)
		}
		aloneDecode = append(aloneDecode, slices.Clone(logits))
	}
	// Together: the prompt goes in chunks of 6, 6 and 3 beside three decode steps.
	b := m.NewBatch()
	dec2, pre := m.NewSequence(0), m.NewSequence(0)
	if _, err := dec2.Forward(storiesPrompt); err != nil {
		t.Fatal(err)
	}
	for i, lo := range []int{0, 6, 12} {
		hi := min(lo+6, len(long))
		out, err := b.StepChunks([]*Sequence{dec2, pre}, [][]int{{decToks[i]}, long[lo:hi]})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(out[0], aloneDecode[i]) {
			t.Fatalf("step %d: decode logits differ from the unbatched run", i)
		}
		if hi == len(long) && !slices.Equal(out[1], alonePrompt) {
			t.Fatal("prompt logits differ from the unbatched prefill")
		}
	}
	if pre.Pos() != len(long) || dec2.Pos() != len(storiesPrompt)+3 {
		t.Errorf("positions %d and %d", pre.Pos(), dec2.Pos())
	}
	// A bad chunk fails the step without changing any sequence.
	if _, err := b.StepChunks([]*Sequence{dec2, pre}, [][]int{{1}, {}}); err == nil {
		t.Error("an empty chunk was accepted")
	}
	if _, err := b.StepChunks([]*Sequence{dec2, pre}, [][]int{{1}, {9999}}); err == nil || dec2.Pos() != len(storiesPrompt)+3 {
		t.Errorf("out-of-range token: %v, position %d", err, dec2.Pos())
	}
}
