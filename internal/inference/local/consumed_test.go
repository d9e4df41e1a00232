package local

import (
	"testing"

	"partnerapi/internal/assistant"
)

// TestConsumedByCancelledRequests drives the scheduler step by step and
// cancels two requests: one still prefilling its prompt, which consumed
// only the prompt tokens computed so far, and one decoding, which consumed
// its whole prompt and every token the scheduler took for it, whether or
// not its caller had drained them. This is what a chat the client cut short
// is billed for.
func TestConsumedByCancelledRequests(t *testing.T) {
	s, newReq := schedulerOnStories(t)
	s.pacer.fixed = prefillStepBusy
	running := newReq(storiesPromptIDs, 200)
	s.admit(running)
	s.step()
	long := make([]int, 100)
	for i := range long {
		long[i] = 3 + (i*37)%500
	}
	joining := newReq(long, 5)
	s.admit(joining)
	s.step()
	s.step()
	// Nothing was computed yet of a request admitted and cancelled
	// before its first step.
	queued := newReq(long, 5)
	s.admit(queued)
	for _, r := range []*request{running, joining, queued} {
		r.cancelled.Store(true)
	}
	s.dropCancelled()
	for _, r := range []*request{running, joining, queued} {
		select {
		case <-r.left:
		default:
			t.Fatal("a cancelled request did not leave")
		}
	}
	if got, want := joining.consumed(), (assistant.Usage{PromptTokens: 2 * prefillStepBusy}); got != want {
		t.Errorf("cancelled while prefilling: %+v, want %+v", got, want)
	}
	if got := queued.consumed(); got != (assistant.Usage{}) {
		t.Errorf("cancelled before its first step: %+v", got)
	}
	// The running stream took its first token when its prompt was done
	// and one in each of the two steps after.
	tokens := 0
	for _, ev := range running.drain(nil) {
		if ev.tok >= 0 {
			tokens++
		}
	}
	if got, want := running.consumed(), (assistant.Usage{PromptTokens: len(storiesPromptIDs), CompletionTokens: 3}); got != want || tokens != 3 {
		t.Errorf("cancelled while decoding: %+v (%d tokens pushed), want %+v", got, tokens, want)
	}
}
