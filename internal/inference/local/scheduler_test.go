package local

import (
	"testing"

	"partnerapi/internal/testenv"
)

// TestJoiningPromptRidesAlongDecode drives the scheduler step by step: a
// long prompt joining while a stream decodes is prefilled at most
// prefillStepBusy tokens per step, inside the same steps that give the
// running stream one token each, and joins the batch when its prompt is
// done.
func TestJoiningPromptRidesAlongDecode(t *testing.T) {
	m, err := LoadModel(testenv.Model(t, "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	s := newSchedulerState(m, -1)
	newReq := func(prompt []int, maxTokens int) *request {
		return &request{prompt: prompt, params: GenerateParams{N: 1, MaxContext: 2048, IgnoreEOS: true}, maxTokens: maxTokens,
			notify: make(chan struct{}, 1), left: make(chan struct{})}
	}
	running := newReq(storiesPromptIDs, 200)
	s.admit(running)
	s.step()
	if len(s.active) != 1 || len(s.joining) != 0 {
		t.Fatalf("the short prompt did not join in one step: %d active, %d joining", len(s.active), len(s.joining))
	}
	long := make([]int, 100)
	for i := range long {
		long[i] = 3 + (i*37)%500
	}
	joining := newReq(long, 5)
	s.admit(joining)
	before := len(running.drain(nil))
	steps := 0
	for len(s.joining) > 0 {
		s.step()
		steps++
		if got := len(running.drain(nil)); got != 1 {
			t.Fatalf("step %d: the running stream got %d tokens, want 1", steps, got)
		}
		if j := s.joining; len(j) > 0 && j[0].seq.Pos() > steps*prefillStepBusy {
			t.Fatalf("step %d: %d prompt tokens prefilled, more than %d per step", steps, j[0].seq.Pos(), prefillStepBusy)
		}
	}
	if want := (len(long) + prefillStepBusy - 1) / prefillStepBusy; steps != want {
		t.Errorf("the long prompt joined after %d steps, want %d", steps, want)
	}
	if len(s.active) != 2 || before != 1 {
		t.Errorf("%d active after the join (first events %d)", len(s.active), before)
	}
	if st := s.stats; st.PrefillTokens != int64(len(storiesPromptIDs)+len(long)) || st.MaxBatch != 1 {
		t.Errorf("stats %+v", st)
	}
	s.failAll(nil)
}
