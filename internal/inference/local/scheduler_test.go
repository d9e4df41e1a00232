package local

import (
	"errors"
	"runtime"
	"testing"
	"time"

	"partnerapi/internal/testenv"
)

// schedulerOnStories returns a scheduler over stories260K without its
// goroutine (the test drives its steps) and a maker of greedy requests.
func schedulerOnStories(t *testing.T) (*scheduler, func(prompt []int, maxTokens int) *request) {
	m, err := LoadModel(testenv.Model(t, "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return newSchedulerState(m, -1), func(prompt []int, maxTokens int) *request {
		return &request{prompt: prompt, params: GenerateParams{N: 1, MaxContext: 2048, IgnoreEOS: true}, maxTokens: maxTokens,
			notify: make(chan struct{}, 1), left: make(chan struct{})}
	}
}

// TestJoiningPromptRidesAlongDecode drives the scheduler step by step: a
// long prompt joining while a stream decodes is prefilled at most the
// pacer's chunk per step (pinned here to prefillStepBusy), inside the same
// steps that give the running stream one token each, and joins the batch
// when its prompt is done.
func TestJoiningPromptRidesAlongDecode(t *testing.T) {
	s, newReq := schedulerOnStories(t)
	s.pacer.fixed = prefillStepBusy
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

// TestPacedJoinKeepsStreamsStepping is the same join with the pacer
// measuring: each step takes no more prompt tokens than the budget it had,
// the running stream still gets a token every step, and with a step time
// this tiny model never nears (a prompt token costs microseconds, a few
// milliseconds under the race detector on a loaded host) the chunk grows
// past the floor, so the prompt joins in fewer steps than 16-token chunks
// would take.
func TestPacedJoinKeepsStreamsStepping(t *testing.T) {
	s, newReq := schedulerOnStories(t)
	s.pacer = pacerFor(10 * time.Second)
	running := newReq(storiesPromptIDs, 400)
	s.admit(running)
	s.step()
	// A few decode-only steps, so that the pacer knows what one costs.
	for range 4 {
		s.step()
	}
	running.drain(nil)
	long := make([]int, 300)
	for i := range long {
		long[i] = 3 + (i*37)%500
	}
	s.admit(newReq(long, 5))
	steps, done := 0, 0
	for len(s.joining) > 0 {
		budget := s.prefillBudget()
		s.step()
		steps++
		if got := len(running.drain(nil)); got != 1 {
			t.Fatalf("step %d: the running stream got %d tokens, want 1", steps, got)
		}
		pos := len(long)
		if len(s.joining) > 0 {
			pos = s.joining[0].seq.Pos()
		}
		if pos-done > budget {
			t.Fatalf("step %d: %d prompt tokens prefilled with a budget of %d", steps, pos-done, budget)
		}
		done = pos
	}
	if floor := (len(long) + prefillStepBusy - 1) / prefillStepBusy; steps >= floor {
		t.Errorf("the prompt joined after %d steps, as many as %d-token chunks take (%d): the chunk did not grow (pacer %+v)", steps, prefillStepBusy, floor, s.pacer)
	}
	s.failAll(nil)
}

// TestPrefillPacerBudget sizes the busy chunk from measured step times.
func TestPrefillPacerBudget(t *testing.T) {
	ms := time.Millisecond
	type obs struct {
		el              time.Duration
		nDecode, prompt int
	}
	for _, c := range []struct {
		name string
		obs  []obs
		want int
	}{
		{"nothing measured", nil, prefillStepBusy},
		{"decode only", []obs{{2 * ms, 10, 0}}, prefillStepBusy},
		// 64 tokens alone in 3.2 ms, ten streams' steps 2 ms: 23 ms free.
		{"small model", []obs{{3200 * time.Microsecond, 0, 64}, {2 * ms, 10, 0}}, 459},
		// Steps of 32 ms, 16 prompt tokens adding 27 ms: up to 64 ms.
		{"0.5B-like", []obs{{32 * ms, 10, 0}, {59 * ms, 10, 16}}, 18},
		{"large model", []obs{{500 * ms, 10, 0}, {1460 * ms, 10, 16}}, prefillStepBusy},
		{"tiny model", []obs{{100 * time.Microsecond, 1, 0}, {150 * time.Microsecond, 1, 100}}, prefillBusyMax},
		// A busy step faster than the decode-only average charges nothing
		// (and the budget is bounded all the same).
		{"noisy", []obs{{5 * ms, 10, 0}, {4 * ms, 10, 16}}, prefillBusyMax},
	} {
		p := pacerFor(0)
		for _, o := range c.obs {
			p.observe(o.el, o.nDecode, o.prompt)
		}
		if got := p.budget(); got != c.want {
			t.Errorf("%s: budget %d, want %d (pacer %+v)", c.name, got, c.want, p)
		}
	}
}

// TestPacerForJoinStep checks Options.JoinStep's meanings: the default
// step, a longer one (a larger chunk at the same measurements), fixed
// chunks.
func TestPacerForJoinStep(t *testing.T) {
	ms := time.Millisecond
	measured := func(p prefillPacer) int {
		p.observe(2*ms, 10, 0)
		p.observe(3*ms, 10, 20) // 50 µs a prompt token
		return p.budget()
	}
	for _, c := range []struct {
		step time.Duration
		want int
	}{
		{0, int((DefaultJoinStep - 2*ms) / (50*time.Microsecond + 1))},
		{12 * ms, int((12*ms - 2*ms) / (50*time.Microsecond + 1))},
		{-1, prefillStepBusy},
	} {
		if got := measured(pacerFor(c.step)); got != c.want {
			t.Errorf("JoinStep %v: budget %d, want %d", c.step, got, c.want)
		}
	}
}

// TestRequestDoneAtFirstTokenLeavesOnce admits a request whose only choice
// is done with the token sampled from its prompt, with the prefix cache
// off: the cache releases that sequence at once, and the joiner must still
// leave the joining list (it once stayed, because it was recognised by its
// sequence's position, which the release reset: the request was prefilled
// and started again and left twice, a close of a closed channel).
func TestRequestDoneAtFirstTokenLeavesOnce(t *testing.T) {
	s, newReq := schedulerOnStories(t)
	s.cache.max = 0
	r := newReq(storiesPromptIDs, 1)
	s.admit(r)
	s.step()
	select {
	case <-r.left:
	default:
		t.Fatal("the request did not leave after its first token")
	}
	if len(s.joining) != 0 || len(s.active) != 0 {
		t.Fatalf("after leaving: %d joining, %d active", len(s.joining), len(s.active))
	}
	s.step() // panicked here before the fix
	if evs := r.drain(nil); len(evs) != 1 {
		t.Errorf("%d events, want 1", len(evs))
	}
}

// TestCancelDuringDropLeavesOnce cancels a three-choice request from another
// goroutine while the scheduler drops cancelled requests, over and over: the
// flag can flip between the request's choices. Judged choice by choice, a
// request could lose its later choices and leave while its first stayed in
// the batch, to leave again at the next drop or at close (a close of a
// closed channel, which panics here).
func TestCancelDuringDropLeavesOnce(t *testing.T) {
	s, newReq := schedulerOnStories(t)
	trials := 20000
	if testing.Short() {
		trials = 2000
	}
	for trial := range trials {
		r := newReq(storiesPromptIDs, 10)
		for i := range 3 {
			s.active = append(s.active, &choiceState{req: r, index: i, seq: s.m.Net.NewSequence(16)})
		}
		ready := make(chan struct{})
		go func() {
			<-ready
			for range trial % 64 {
				runtime.Gosched()
			}
			r.cancelled.Store(true)
		}()
		close(ready)
		for !isClosed(r.left) {
			s.dropCancelled()
			if isClosed(r.left) && len(s.active) != 0 {
				t.Fatalf("trial %d: the request left with %d of its choices still in the batch", trial, len(s.active))
			}
		}
		s.failActive(errors.New("closed")) // a second leave would panic here
	}
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestSchedulerDecodeStepAllocatesNothing steps ten decoding requests
// through the scheduler, handing their tokens over as their callers do:
// once the batch's scratch, the KV caches (reserved when the requests
// joined) and the event buffers exist, a step allocates nothing, so the
// scratch is made once per sequence and per batch, not per token.
func TestSchedulerDecodeStepAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items, so every step allocates")
	}
	s, newReq := schedulerOnStories(t)
	reqs := make([]*request, 10)
	for i := range reqs {
		reqs[i] = newReq([]int{1, 403 + i, 407, 261, 378}, 400)
		s.admit(reqs[i])
	}
	// Each caller swaps two event buffers (request.drain).
	spare := make([][]event, len(reqs))
	step := func() {
		s.step()
		s.updateStats()
		for i, r := range reqs {
			spare[i] = r.drain(spare[i])
		}
	}
	for range 4 {
		step()
	}
	if len(s.active) != len(reqs) {
		t.Fatalf("%d choices in the batch, want %d", len(s.active), len(reqs))
	}
	// Collections between the counted steps take nothing from the
	// kernels' scratch (kernels.FreeList; with sync.Pools a step after two
	// of them refilled the pools, and model.TestDecodeStepAllocatesNothing
	// failed CI so).
	if allocs := testing.AllocsPerRun(50, func() { runtime.GC(); runtime.GC(); step() }); allocs != 0 {
		t.Errorf("a scheduler step of %d streams made %.1f heap allocations, want 0", len(reqs), allocs)
	}
	s.failAll(nil)
}
