package local

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"
)

// prefixWaitPrompt returns a prompt for the prefix-wait tests: a prefix of
// shared tokens that every variant has, then tail tokens of its own.
func prefixWaitPrompt(shared, variant, tail int) []int {
	p := []int{1}
	for i := range shared - 1 {
		p = append(p, 3+(i*37)%400)
	}
	for i := range tail {
		p = append(p, 410+(variant*7+i)%90)
	}
	return p
}

// unrelatedPrompt returns a prompt of n tokens that shares nothing with
// prefixWaitPrompt's beyond the BOS token.
func unrelatedPrompt(n int) []int {
	p := []int{1}
	for i := range n - 1 {
		p = append(p, 300+(i*11)%100)
	}
	return p
}

// joinerOf returns r's joiner, or nil once r has left the joining list.
func joinerOf(s *scheduler, r *request) *joiner {
	for _, j := range s.joining {
		if j.req == r {
			return j
		}
	}
	return nil
}

func isActive(s *scheduler, r *request) bool {
	return slices.ContainsFunc(s.active, func(c *choiceState) bool { return c.req == r })
}

// TestPrefixWaiterDoesNotBlockLaterRequests admits, on an idle scheduler, a
// prompt A, then W whose prompt shares 20 tokens with A's (so it waits for
// A's prefill to reuse them), then an unrelated prompt U, then W2 sharing
// the same prefix. U must be prefilled in the first step beside A, not a
// step later behind the waiting W (the head-of-line blocking the admission
// loop once had: it stopped at the first waiter). W and W2 keep their
// places: both join at the next step, reusing A's prefix, W before W2.
func TestPrefixWaiterDoesNotBlockLaterRequests(t *testing.T) {
	s, newReq := schedulerOnStories(t)
	a := newReq(prefixWaitPrompt(20, 0, 20), 50)
	w := newReq(prefixWaitPrompt(20, 1, 5), 50)
	u := newReq(unrelatedPrompt(8), 50)
	w2 := newReq(prefixWaitPrompt(20, 2, 5), 50)
	for _, r := range []*request{a, w, u, w2} {
		s.admit(r)
	}
	// 40 + 8 prompt tokens fit in an idle step's budget.
	if need := len(a.prompt) + len(u.prompt); need > s.prefillBudget() {
		t.Fatalf("the test's prompts (%d tokens) do not fit one idle step (%d)", need, s.prefillBudget())
	}
	s.step()
	if !isActive(s, a) {
		t.Fatal("A did not join the batch in the first step")
	}
	if !isActive(s, u) {
		t.Errorf("the unrelated request did not join in the first step (joiner %+v): it waited behind a request waiting for a shared prefix", joinerOf(s, u))
	}
	for name, r := range map[string]*request{"W": w, "W2": w2} {
		if j := joinerOf(s, r); j == nil || j.seq != nil {
			t.Fatalf("%s was not kept waiting for A's prefix: %+v", name, j)
		}
	}
	if got := s.stats.PrefillTokens; got != int64(len(a.prompt)+len(u.prompt)) {
		t.Errorf("first step prefilled %d tokens, want %d", got, len(a.prompt)+len(u.prompt))
	}
	s.step()
	if len(s.joining) != 0 {
		t.Fatalf("%d requests still joining after the second step", len(s.joining))
	}
	for name, r := range map[string]*request{"W": w, "W2": w2} {
		if r.precached != 20 {
			t.Errorf("%s reused %d prompt tokens, want the shared 20", name, r.precached)
		}
	}
	iw := slices.IndexFunc(s.active, func(c *choiceState) bool { return c.req == w })
	iw2 := slices.IndexFunc(s.active, func(c *choiceState) bool { return c.req == w2 })
	if iw < 0 || iw2 < 0 || iw > iw2 {
		t.Errorf("W joined at %d and W2 at %d: the waiters did not keep their order", iw, iw2)
	}
	s.failAll(nil)
}

// TestPrefixWaitersKeepTheirOrder runs, beside a decoding stream (prompt
// chunks of 48 tokens a step), a leader whose prompt takes two steps, then
// waiters for its prefix interleaved with unrelated requests. The first
// waiter starts in the leader's last step, and the later waiters wait for
// it while the unrelated requests behind them are prefilled in the same
// step as one another (the loop once stopped at the first waiter, so the
// second unrelated request started a step after the first). The waiters
// are attached in their arrival order: a later arrival that shares the
// prefix never overtakes an earlier one, and every waiter reuses the
// prefix, the first one from the leader's sequence while it is still
// being prefilled.
func TestPrefixWaitersKeepTheirOrder(t *testing.T) {
	s, newReq := schedulerOnStories(t)
	s.pacer.fixed = 48
	running := newReq(storiesPromptIDs, 400)
	s.admit(running)
	s.step()
	lead := newReq(prefixWaitPrompt(40, 0, 30), 20)
	waiters := []*request{newReq(prefixWaitPrompt(40, 1, 3), 20), newReq(prefixWaitPrompt(40, 2, 3), 20), newReq(prefixWaitPrompt(40, 3, 3), 20)}
	others := []*request{newReq(unrelatedPrompt(6), 20), newReq(unrelatedPrompt(7), 20)}
	for _, r := range []*request{lead, waiters[0], others[0], waiters[1], others[1], waiters[2]} {
		s.admit(r)
	}
	attachedAt := map[*request]int{}
	for step := 1; len(s.joining) > 0; step++ {
		if step > 50 {
			t.Fatalf("still %d joining after 50 steps", len(s.joining))
		}
		s.step()
		for _, r := range append(slices.Clone(waiters), others...) {
			if _, ok := attachedAt[r]; ok {
				continue
			}
			if j := joinerOf(s, r); (j != nil && j.seq != nil) || isActive(s, r) {
				attachedAt[r] = step
			}
		}
	}
	t.Logf("attached at steps: waiters %d %d %d, unrelated %d %d", attachedAt[waiters[0]], attachedAt[waiters[1]], attachedAt[waiters[2]], attachedAt[others[0]], attachedAt[others[1]])
	if attachedAt[others[1]] != attachedAt[others[0]] {
		t.Errorf("the second unrelated request started prefilling at step %d, the first at %d: it waited behind a waiter", attachedAt[others[1]], attachedAt[others[0]])
	}
	for i := 1; i < len(waiters); i++ {
		if attachedAt[waiters[i]] < attachedAt[waiters[i-1]] {
			t.Errorf("waiter %d was attached at step %d, before waiter %d (step %d)", i, attachedAt[waiters[i]], i-1, attachedAt[waiters[i-1]])
		}
	}
	// The first waiter starts while the leader is still being prefilled
	// and copies the prefix from its sequence; the later ones start once
	// the leader (or the first waiter) is in the batch.
	for i, r := range waiters {
		if r.precached != 40 {
			t.Errorf("waiter %d reused %d prompt tokens, want the shared 40", i, r.precached)
		}
	}
	s.failAll(nil)
}

// TestFailedStepSparesWaiters makes a step fail (an unrelated request's
// prompt holds a token id outside the vocabulary) while a request waits for
// a prefix: the requests of that step fail, the waiter, which was not in
// it, stays and joins at the next step.
func TestFailedStepSparesWaiters(t *testing.T) {
	s, newReq := schedulerOnStories(t)
	a := newReq(prefixWaitPrompt(20, 0, 20), 10)
	w := newReq(prefixWaitPrompt(20, 1, 5), 10)
	bad := newReq(append(unrelatedPrompt(5), 1<<20), 10)
	for _, r := range []*request{a, w, bad} {
		s.admit(r)
	}
	s.step()
	for name, r := range map[string]*request{"A": a, "the bad request": bad} {
		if !isClosed(r.left) || r.err == nil {
			t.Errorf("%s of the failed step did not fail: left %v, err %v", name, isClosed(r.left), r.err)
		}
	}
	if isClosed(w.left) {
		t.Fatalf("the waiting request failed with a step it was not in: %v", w.err)
	}
	if len(s.joining) != 1 || s.joining[0].req != w || s.joining[0].seq != nil {
		t.Fatalf("joining after the failed step: %d", len(s.joining))
	}
	s.step()
	if !isActive(s, w) {
		t.Errorf("the waiter did not join after the failed step")
	}
	s.failAll(errors.New("done"))
}

// TestWaiterReusesPrefixStillPrefilling runs, beside a decoding stream
// (prompt chunks of 48 tokens a step), a leader whose prompt of 70 tokens
// takes two steps and a waiter sharing its first 40. The waiter waits
// through the leader's first step and starts in its second, when the
// leader has computed the shared part but is still being prefilled, so it
// is neither in the batch nor in the prefix cache yet: the waiter must copy
// the 40 shared tokens from the leader's sequence. It once recomputed them
// (reusing only the BOS token it shares with the running stream), and its
// wait bought nothing.
func TestWaiterReusesPrefixStillPrefilling(t *testing.T) {
	s, newReq := schedulerOnStories(t)
	s.pacer.fixed = 48
	running := newReq(storiesPromptIDs, 400)
	s.admit(running)
	s.step()
	lead := newReq(prefixWaitPrompt(40, 0, 30), 20)
	w := newReq(prefixWaitPrompt(40, 1, 3), 20)
	s.admit(lead)
	s.admit(w)
	s.step()
	// The leader copied the BOS token from the running stream and
	// prefilled a chunk of 48 after it.
	leadPos := 0
	if j := joinerOf(s, lead); j != nil && j.seq != nil {
		leadPos = j.seq.Pos()
	}
	if leadPos != 49 {
		t.Fatalf("after the first step the leader has %d of its %d prompt tokens, want 49", leadPos, len(lead.prompt))
	}
	if j := joinerOf(s, w); j == nil || j.seq != nil {
		t.Fatalf("the waiter did not wait for the leader's prefix: %+v", j)
	}
	before := s.stats.PrefillTokens
	s.step()
	if w.precached != 40 {
		t.Errorf("the waiter reused %d prompt tokens, want the shared 40", w.precached)
	}
	if !isActive(s, lead) || !isActive(s, w) {
		t.Fatalf("the leader (%v) or the waiter (%v) did not join the batch in the second step", isActive(s, lead), isActive(s, w))
	}
	if got, want := s.stats.PrefillTokens-before, int64(len(lead.prompt)-leadPos+len(w.prompt)-40); got != want {
		t.Errorf("the second step prefilled %d prompt tokens, want %d (the leader's rest and the waiter's own tail)", got, want)
	}
	s.failAll(nil)
}

// TestPrefixFromPrefillingLeaderMatchesAlone checks the KV a request copies
// from one still being prefilled: its greedy tokens must be those it
// generates alone on an idle scheduler. In the first case the waiter
// starts as the scheduler starts it, once the leader has computed the
// shared 40 tokens; in the second it shares 60 tokens with a leader that
// has computed 49 of them and is attached by hand, so it must copy exactly
// the 49 computed positions and prefill the rest itself (a copy of the 11
// positions not yet written would hold whatever the pool's memory held).
func TestPrefixFromPrefillingLeaderMatchesAlone(t *testing.T) {
	untimed := func(evs []event) string {
		for i := range evs {
			evs[i].at = time.Time{}
		}
		return fmt.Sprint(evs)
	}
	for _, c := range []struct {
		name        string
		shared      int
		attachEarly bool
		wantReused  int
	}{
		{name: "waiter started by the scheduler", shared: 40, wantReused: 40},
		{name: "attached before the shared part is computed", shared: 60, attachEarly: true, wantReused: 49},
	} {
		t.Run(c.name, func(t *testing.T) {
			alone, newAlone := schedulerOnStories(t)
			solo := newAlone(prefixWaitPrompt(c.shared, 1, 5), 30)
			alone.admit(solo)
			for steps := 0; !isClosed(solo.left); steps++ {
				if steps > 100 {
					t.Fatal("the request alone does not finish")
				}
				alone.step()
			}
			if solo.err != nil || solo.precached != 0 {
				t.Fatalf("alone: err %v, reused %d", solo.err, solo.precached)
			}
			want := untimed(solo.drain(nil))

			s, newReq := schedulerOnStories(t)
			s.pacer.fixed = 48
			running := newReq(storiesPromptIDs, 400)
			s.admit(running)
			s.step()
			lead := newReq(prefixWaitPrompt(c.shared, 0, 30), 30)
			w := newReq(prefixWaitPrompt(c.shared, 1, 5), 30)
			s.admit(lead)
			s.admit(w)
			s.step()
			if c.attachEarly {
				// The leader copied the BOS token from the running
				// stream and prefilled a chunk of 48 after it.
				if j := joinerOf(s, lead); j == nil || j.seq == nil || j.seq.Pos() != 49 {
					t.Fatalf("after the first step the leader is not half prefilled: %+v", j)
				}
				s.attach(joinerOf(s, w))
			}
			for steps := 0; !isClosed(w.left); steps++ {
				if steps > 100 {
					t.Fatal("the waiter does not finish")
				}
				s.step()
			}
			if w.err != nil {
				t.Fatal(w.err)
			}
			if w.precached != c.wantReused {
				t.Errorf("the waiter reused %d prompt tokens, want %d", w.precached, c.wantReused)
			}
			if got := untimed(w.drain(nil)); got != want || len(want) < 20 {
				t.Errorf("the waiter's tokens after reuse:\n%s\nalone:\n%s", got, want)
			}
			s.failAll(nil)
		})
	}
}
