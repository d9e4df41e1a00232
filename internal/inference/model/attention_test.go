package model

import (
	"math"
	"slices"
	"testing"

	"partnerapi/internal/inference/gguf"
)

// withChunkLen runs f with attnChunkLen set to n, so that the short test
// sequences take the chunked (flash-decoding) attention.
func withChunkLen(t *testing.T, n int, f func()) {
	t.Helper()
	old, oldHeads := attnChunkLen, attnChunkKVHeads
	attnChunkLen, attnChunkKVHeads = n, 1<<20 // stories260K has four KV heads
	defer func() { attnChunkLen, attnChunkKVHeads = old, oldHeads }()
	f()
}

// TestChunkedAttentionMatchesSinglePass checks that splitting a row's
// positions into chunks and merging them gives the logits of the single
// pass within float rounding, for the Go kernels (stories260K's head size)
// and the grouped vector kernels in passes of three and four heads, in
// prefill (many rows) and decode.
func TestChunkedAttentionMatchesSinglePass(t *testing.T) {
	gqa3 := openSynthetic(t, synthConfig{arch: "llama", embd: 576, layers: 2, heads: 9, kvHeads: 3, ff: 128, vocab: 64, ctx: 96, rot: 64, weightType: gguf.F32}, 3)
	gqa7 := openSynthetic(t, synthConfig{arch: "qwen2", embd: 896, layers: 2, heads: 14, kvHeads: 2, ff: 128, vocab: 64, ctx: 96, rot: 64, bias: true, weightType: gguf.F32}, 4)
	prompt := []int{1, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 12, 13, 14, 15}
	for _, tc := range []struct {
		name string
		m    *Model
	}{
		{"stories260K", openModel(t, "stories260K.gguf")},
		{"GQA 9 over 3", gqa3},
		{"GQA 14 over 2", gqa7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := func() [][]float32 {
				seq := tc.m.NewSequence(0)
				logits, err := seq.Forward(prompt)
				if err != nil {
					t.Fatal(err)
				}
				out := [][]float32{append([]float32(nil), logits...)}
				for i := range 20 {
					if logits, err = seq.Forward([]int{(7*i + 3) % 64}); err != nil {
						t.Fatal(err)
					}
					out = append(out, append([]float32(nil), logits...))
				}
				return out
			}
			want := run()
			for _, n := range []int{3, 7, 16} {
				var got [][]float32
				withChunkLen(t, n, func() { got = run() })
				differs := false
				for i := range want {
					var scale, diff float64
					for j := range want[i] {
						scale = max(scale, math.Abs(float64(want[i][j])))
						diff = max(diff, math.Abs(float64(got[i][j]-want[i][j])))
						differs = differs || got[i][j] != want[i][j]
					}
					if diff > 1e-4*scale+1e-5 {
						t.Fatalf("chunks of %d, step %d: logits differ by %g (largest %g)", n, i, diff, scale)
					}
				}
				if !differs {
					t.Errorf("chunks of %d: logits bit-identical to the single pass; the chunked path did not run", n)
				}
			}
		})
	}
}

// TestChunkedAttentionBatchInvariant repeats the batch-invariance tests with
// chunks short enough that rows of one step take different numbers of
// chunks (and some none), and the pool splits one row's chunks across
// workers: a token's logits must still not depend on its batch.
func TestChunkedAttentionBatchInvariant(t *testing.T) {
	withChunkLen(t, 7, func() {
		t.Run("Step", TestBatchStepMatchesForward)
		t.Run("StepChunks", TestStepChunksMixesPrefillAndDecode)
	})
}

func TestChunksFor(t *testing.T) {
	for _, tc := range []struct{ span, kvHeads, want int }{
		{1, 3, 1}, {attnChunkLen, 3, 1}, {attnChunkLen + 1, 3, 2}, {3 * attnChunkLen, 2, 3},
		{3 * attnChunkLen, attnChunkKVHeads, 1}, // enough groups: never chunked
	} {
		if got := chunksFor(tc.span, tc.kvHeads); got != tc.want {
			t.Errorf("chunksFor(%d, %d) = %d, want %d", tc.span, tc.kvHeads, got, tc.want)
		}
	}
}

// TestLongRowsUnchunkedWithEnoughGroups runs a model with as many KV heads
// as attnChunkKVHeads (stories260K: four) at spans beyond attnChunkLen: its
// rows are not chunked, so their logits must equal the default's bit for
// bit (and the whole-row score buffer must be large enough).
func TestLongRowsUnchunkedWithEnoughGroups(t *testing.T) {
	m := openModel(t, "stories260K.gguf")
	if m.NHeadKV < attnChunkKVHeads {
		t.Fatalf("stories260K has %d KV heads, the test needs %d", m.NHeadKV, attnChunkKVHeads)
	}
	run := func() [][]float32 {
		seq := m.NewSequence(0)
		var out [][]float32
		logits, err := seq.Forward(storiesPrompt)
		for i := 0; err == nil && i < 20; i++ {
			out = append(out, append([]float32(nil), logits...))
			logits, err = seq.Forward([]int{argmax(logits)})
		}
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	want := run()
	old := attnChunkLen
	attnChunkLen = 3
	defer func() { attnChunkLen = old }()
	got := run()
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Fatalf("step %d: logits changed with attnChunkLen %d for a model that is not chunked", i, attnChunkLen)
		}
	}
}
