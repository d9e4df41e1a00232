package local

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"partnerapi/internal/assistant"
)

// TestPrefixReuseEdgeCases runs a request after earlier ones that leave
// (or do not leave) a reusable prefix, and checks that the request returns
// exactly what it returns on an engine without any reuse, that it reports
// the reused tokens in PrecachedPromptTokens, and that the engine ends with
// no KV memory in the batch.
func TestPrefixReuseEdgeCases(t *testing.T) {
	ctx := context.Background()
	chat := func(text string, maxTokens, n int) assistant.GenerateRequest {
		return assistant.GenerateRequest{Model: "stories260K", Messages: userMessage(text), MaxTokens: maxTokens, N: n}
	}
	generate := func(e *Engine, req assistant.GenerateRequest) {
		t.Helper()
		if _, err := e.Generate(ctx, req, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name string
		// earlier runs on the engine before the probe.
		earlier func(t *testing.T, e *Engine)
		probe   assistant.GenerateRequest
		// The reused prompt tokens the probe must report, given its prompt
		// length: [lo, hi].
		precached func(prompt int) (lo, hi int)
	}{
		{
			// The whole prompt is cached: all but its last token are reused
			// (that token's logits are needed), and every one of the n
			// choices starts from a copy of that prefix.
			name:      "whole prompt cached, three choices",
			earlier:   func(t *testing.T, e *Engine) { generate(e, chat("Once upon a time", 10, 1)) },
			probe:     chat("Once upon a time", 20, 3),
			precached: func(p int) (int, int) { return p - 1, p - 1 },
		},
		{
			// The prompt is a prefix of an earlier prompt and its
			// completion: again all but its last token are reused.
			name:      "prompt inside a cached completion",
			earlier:   func(t *testing.T, e *Engine) { generate(e, chat("Once upon a time", 40, 1)) },
			probe:     chat("Once upon a time, there was a little girl", 20, 1),
			precached: func(p int) (int, int) { return p - 1, p - 1 },
		},
		{
			// A growing conversation: the next turn's prompt holds the
			// first turn's prompt and reply.
			name: "growing conversation",
			earlier: func(t *testing.T, e *Engine) {
				generate(e, assistant.GenerateRequest{Model: "stories260K", MaxTokens: 12,
					Messages: []assistant.Message{{Role: "system", Content: "Lily and Tom went to the park."}, {Role: "user", Content: "Once upon a time"}}})
			},
			probe: assistant.GenerateRequest{Model: "stories260K", MaxTokens: 20, Messages: []assistant.Message{
				{Role: "system", Content: "Lily and Tom went to the park."}, {Role: "user", Content: "Once upon a time"},
				{Role: "assistant", Content: ", there was a little girl"}, {Role: "user", Content: "The sun was"}}},
			precached: func(p int) (int, int) { return 14, p - 1 },
		},
		{
			// The earlier request ran in a context of 16 tokens (as
			// GenerateTokens allows): its cached KV must not bring that
			// window into the probe's sequence, which has the model's.
			name: "cached from a smaller context window",
			earlier: func(t *testing.T, e *Engine) {
				if _, err := e.GenerateTokens(ctx, "stories260K", storiesPromptIDs, GenerateParams{MaxContext: 16, MaxTokens: 8, IgnoreEOS: true}, nil); err != nil {
					t.Fatal(err)
				}
			},
			probe:     chat("Once upon a time", 40, 1),
			precached: func(p int) (int, int) { return p - 1, p - 1 },
		},
		{
			// A cancelled request's KV memory is released, not cached: the
			// probe reuses nothing of it, and the memory the pool hands it
			// holds nothing of the cancelled stream that it reads.
			name: "after a cancelled stream",
			earlier: func(t *testing.T, e *Engine) {
				cctx, cancel := context.WithCancel(ctx)
				n := 0
				_, err := e.Generate(cctx, chat("Once upon a time", 400, 2), func(assistant.Delta) error {
					if n++; n == 8 {
						cancel()
					}
					return nil
				})
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("cancelled stream: %v", err)
				}
			},
			probe:     chat("Once upon a time", 30, 2),
			precached: func(int) (int, int) { return 0, 0 },
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			want, err := openEngine(t, "", Options{PrefixCache: -1}).Generate(ctx, c.probe, nil)
			if err != nil {
				t.Fatal(err)
			}
			e := openEngine(t, "", Options{})
			c.earlier(t, e)
			got, err := e.Generate(ctx, c.probe, nil)
			if err != nil {
				t.Fatalf("probe after the earlier requests: %v", err)
			}
			t.Logf("precached %d of %d prompt tokens", got.Usage.PrecachedPromptTokens, got.Usage.PromptTokens)
			lo, hi := c.precached(got.Usage.PromptTokens)
			if p := got.Usage.PrecachedPromptTokens; p < lo || p > hi {
				t.Errorf("precached %d of %d prompt tokens, want %d…%d", p, got.Usage.PromptTokens, lo, hi)
			}
			got.Usage.PrecachedPromptTokens = want.Usage.PrecachedPromptTokens
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("with reuse:\n%+v\nwithout:\n%+v", got, want)
			}
			if st := statsOf(t, e); st.ActiveSequences != 0 || st.KVBytes != 0 || st.ActiveRequests != 0 {
				t.Errorf("after the probe: %+v", st)
			}
		})
	}
}
