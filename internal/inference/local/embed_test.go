package local

import (
	"context"
	"errors"
	"math"
	"slices"
	"sync"
	"testing"

	"partnerapi/internal/assistant"
	"partnerapi/internal/inference/model"
)

const embedderManifest = `{"type":"embedder"}`

func embed(t *testing.T, e *Engine, inputs ...string) []assistant.Embedding {
	t.Helper()
	items, err := e.Embed(context.Background(), "stories260K", inputs)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != len(inputs) {
		t.Fatalf("%d vectors for %d inputs", len(items), len(inputs))
	}
	return items
}

func TestEmbedVectorsAndUsage(t *testing.T) {
	e := openEngine(t, embedderManifest, Options{})
	m, _ := e.Model("stories260K")
	inputs := []string{
		"Once upon a time there was a little girl",
		"Once upon a time there was a little dog",
		"Once upon a time there was a little girl",
		"The sun was hot.",
	}
	items := embed(t, e, inputs...)
	for i, it := range items {
		want := m.Tokenizer.Encode(inputs[i], true, false)
		if it.PromptTokens != len(want) || want[0] != m.Tokenizer.BOS() {
			t.Errorf("input %d: %d prompt tokens, want %d starting with BOS", i, it.PromptTokens, len(want))
		}
		if len(it.Vector) != m.Net.NEmbd {
			t.Fatalf("input %d: length %d, want n_embd %d", i, len(it.Vector), m.Net.NEmbd)
		}
		var ss float64
		for _, v := range it.Vector {
			ss += float64(v) * float64(v)
		}
		if math.Abs(ss-1) > 1e-5 {
			t.Errorf("input %d: squared norm %v", i, ss)
		}
		// The engine's vector is the model's own pooled embedding of the
		// same tokens.
		direct, err := m.Net.Embed(context.Background(), want, model.PoolingMean)
		if err != nil || !slices.Equal(direct, it.Vector) {
			t.Errorf("input %d: differs from model.Embed of its tokens (%v)", i, err)
		}
	}
	if !slices.Equal(items[0].Vector, items[2].Vector) {
		t.Error("identical texts gave different vectors")
	}
	for _, pair := range [][2]int{{0, 1}, {0, 3}, {1, 3}} {
		if slices.Equal(items[pair[0]].Vector, items[pair[1]].Vector) {
			t.Errorf("inputs %d and %d gave the same vector", pair[0], pair[1])
		}
	}
	again := embed(t, e, inputs[1])
	if !slices.Equal(again[0].Vector, items[1].Vector) {
		t.Error("embedding is not deterministic across calls")
	}
}

func TestEmbedRefusals(t *testing.T) {
	chat := openEngine(t, "", Options{})
	small := openEngine(t, `{"type":"embedder","context_window":8}`, Options{})
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name   string
		e      *Engine
		ctx    context.Context
		model  string
		inputs []string
		is     error
	}{
		{"chat model", chat, context.Background(), "stories260K", []string{"hi"}, assistant.ErrNotEmbedder},
		{"unknown model", small, context.Background(), "nope", []string{"hi"}, assistant.ErrNoSuchModel},
		{"over the window", small, context.Background(), "stories260K",
			[]string{"short", "Once upon a time there was a little girl named Lily"}, assistant.ErrContextWindow},
		{"cancelled", small, cancelled, "stories260K", []string{"hi"}, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			items, err := tc.e.Embed(tc.ctx, tc.model, tc.inputs)
			if !errors.Is(err, tc.is) {
				t.Errorf("error %v (items %d), want %v", err, len(items), tc.is)
			}
		})
	}
}

// TestEmbedAlongsideGeneration embeds while the scheduler decodes on the
// same model: run with -race, it shows the two share nothing mutable, and
// the vectors equal those of a quiet engine.
func TestEmbedAlongsideGeneration(t *testing.T) {
	e := openEngine(t, embedderManifest, Options{Concurrency: 4})
	inputs := []string{"Once upon a time", "Lily liked to play in the park with her ball."}
	want := embed(t, e, inputs...)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			if _, err := e.GenerateTokens(context.Background(), "stories260K", []int{1, 403, 407, 261, 378}, GenerateParams{MaxTokens: 40}, nil); err != nil {
				t.Error(err)
			}
		})
	}
	for range 2 {
		wg.Go(func() {
			for range 3 {
				got, err := e.Embed(context.Background(), "stories260K", inputs)
				if err != nil {
					t.Error(err)
					return
				}
				for i := range got {
					if !slices.Equal(got[i].Vector, want[i].Vector) {
						t.Errorf("input %d changed while generating", i)
					}
				}
			}
		})
	}
	wg.Wait()
}
