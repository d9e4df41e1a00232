package upstream

import (
	"context"
	"testing"

	"partnerapi/internal/assistant"
)

// A pool counts its chats' usage and times their first token, as the
// embedded engine's metrics do (inference reference §10): two chats of the
// fake replica, each 3 prompt and 2 completion tokens, one streamed and one
// not.
func TestPoolChatStats(t *testing.T) {
	a := newReplica(t, "a")
	p := testPool(t, PoolOptions{}, a)
	if _, err := hello(context.Background(), p, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := hello(context.Background(), p, func(assistant.Delta) error { return nil }); err != nil {
		t.Fatal(err)
	}
	st := p.ChatStats()
	if st.PromptTokens != 6 || st.CompletionTokens != 4 {
		t.Errorf("tokens %d prompt, %d completion; want 6 and 4", st.PromptTokens, st.CompletionTokens)
	}
	h := st.TimeToFirstToken
	if h.Count != 2 || h.Sum <= 0 || h.Buckets[60] != 2 {
		t.Errorf("time to first token %+v, want two observations", h)
	}
}
